// --model names: zoo names ignore case and separators, an unknown name suggests the nearest zoo
// or multimodal name on one line, and a file of that name still wins over a near-miss.
#include "catalog/model_source.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "common/thrown_field.h"

#include "catalog/gpu_catalog.h"
#include "catalog/multimodal_models.h"
#include "catalog/name_match.h"
#include "formats/model_json.h"
#include "formats/multimodal_json.h"

namespace tessera {
namespace {

using testing::thrown_field;

std::string error_text(const std::string& name) {
  try {
    load_model(name);
  } catch (const Error& e) {
    return e.what();
  }
  return "<no error>";
}

TEST(ModelNames, CaseAndSeparatorsFindTheZooModel) {
  const ModelSpec want = builtin_model("llama3-70b");
  for (const char* name : {"Llama3-70B", "llama-3-70b", "LLAMA3_70B", "llama3 70b"}) {
    EXPECT_EQ(builtin_model_name(name), "llama3-70b") << name;
    EXPECT_EQ(model_to_json(load_model(name)), model_to_json(want)) << name;
  }
  EXPECT_EQ(builtin_model_name("Qwen2.5-72B"), "qwen2.5-72b");
  EXPECT_FALSE(builtin_model_name("qwen25-72b").has_value());  // '.' is kept: a typo, not a spelling
}

TEST(ModelNames, UnknownNameSuggestsTheNearestOnOneLine) {
  EXPECT_NE(error_text("lama3-70b").find("did you mean llama3-70b?"), std::string::npos);
  EXPECT_NE(error_text("qwen25-72b").find("did you mean qwen2.5-72b?"), std::string::npos);
  EXPECT_NE(error_text("mixtral").find("did you mean mixtral-8x"), std::string::npos);
  // A multimodal model's name is suggested too, though only text models load here.
  EXPECT_NE(error_text("llava-1.5-7").find("did you mean llava-1.5-7b?"), std::string::npos);
  const std::string far = error_text("nosuch");
  EXPECT_EQ(far.find("did you mean"), std::string::npos) << far;
  EXPECT_EQ(far.find('\n'), std::string::npos);
  EXPECT_EQ(thrown_field([] { load_model("nosuch"); }), "model");
  EXPECT_EQ(thrown_field([] { builtin_model("nosuch"); }), "model");
}

TEST(ModelNames, AFileOfTheSameNameWinsOverANearMiss) {
  const auto dir = std::filesystem::temp_directory_path() / ("tessera_model_source_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto path = dir / "Llama3-70B";
  nlohmann::json small = model_to_json(builtin_model("llama2-7b"));
  std::ofstream(path) << small.dump();
  const auto previous = std::filesystem::current_path();
  std::filesystem::current_path(dir);  // "Llama3-70B" is now both a file here and a zoo spelling
  const std::int64_t layers = load_model("Llama3-70B").layers;
  std::filesystem::current_path(previous);
  EXPECT_EQ(layers, builtin_model("llama2-7b").layers);
  EXPECT_NE(layers, builtin_model("llama3-70b").layers);
  std::filesystem::remove_all(dir);
}

// Forgiving lookup is only safe while no two names normalize alike.
TEST(ModelNames, BuiltinNamesStayDistinctWhenNormalized) {
  std::set<std::string> seen;
  for (const auto& name : builtin_model_names()) EXPECT_TRUE(seen.insert(normalized_name(name)).second) << name;
  for (const auto& name : builtin_multimodal_names()) EXPECT_TRUE(seen.insert(normalized_name(name)).second) << name;
  std::set<std::string> gpu_names;
  for (const auto& g : gpu_catalog()) {
    EXPECT_TRUE(gpu_names.insert(normalized_name(g.key)).second) << g.key;
    for (const auto& alias : g.aliases) EXPECT_TRUE(gpu_names.insert(normalized_name(alias)).second) << alias;
  }
}

}  // namespace
}  // namespace tessera
