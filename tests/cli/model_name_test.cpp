// A model imported from a Hugging Face config.json goes by one name everywhere (issue 32): its
// `_name_or_path` (else its folder or file, formats/hf_config.h hf_model_name) in the text table,
// the --json document, the Megatron-LM launch script's header and the HTML page's title, so
// reports of several models can be told apart.
#include <filesystem>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_process.h"

namespace {

using namespace tessera::testing;

class ModelName : public CliScratchTest {
 protected:
  // Llama-2-7B's config in a folder whose name is not the model's, under another _name_or_path.
  std::string config(const std::string& name_or_path) {
    nlohmann::json j = nlohmann::json::parse(
        read_file(std::filesystem::path(TESSERA_SOURCE_DIR) / "tests" / "fixtures" / "hf" / "llama-2-7b.json"));
    if (name_or_path.empty()) j.erase("_name_or_path");
    else j["_name_or_path"] = name_or_path;
    return file("checkpoint-1000/config.json", j.dump()).string();
  }
};

TEST_F(ModelName, NameOrPathIsTheNameInTextJsonScriptAndPage) {
  const std::string model = config("acme/Llama-2-7b-acme-sft");
  const std::vector<std::string> estimate = {"estimate", "--model", model, "--cluster", "h100:8", "--plan",
                                             "tp=1,mb=1,gbs=8,seq=4096"};
  const RunResult text = run_tessera(dir_, estimate);
  ASSERT_EQ(text.exit_code, 0) << describe(text);
  EXPECT_NE(text.out.find("model    Llama-2-7b-acme-sft ("), std::string::npos) << text.out;

  auto json_args = estimate;
  json_args.push_back("--json");
  const RunResult json = run_tessera(dir_, json_args);
  ASSERT_EQ(json.exit_code, 0) << describe(json);
  EXPECT_EQ(nlohmann::json::parse(json.out).at("model"), "Llama-2-7b-acme-sft");

  const std::vector<std::string> plan = {"plan", "--quiet", "--model", model, "--cluster", "h100:8", "--gbs", "8",
                                         "--seq", "4096", "--top", "1"};
  auto script_args = plan;
  script_args.insert(script_args.end(), {"--emit", "megatron"});
  const RunResult script = run_tessera(dir_, script_args);
  ASSERT_EQ(script.exit_code, 0) << describe(script);
  const std::string header = script.out.substr(0, script.out.find('\n', script.out.find('\n') + 1));
  EXPECT_NE(header.find(" for Llama-2-7b-acme-sft on "), std::string::npos) << header;

  auto page_args = plan;
  page_args.insert(page_args.end(), {"--html", (dir_ / "plan.html").string()});
  const RunResult page = run_tessera(dir_, page_args);
  ASSERT_EQ(page.exit_code, 0) << describe(page);
  EXPECT_NE(read_file(dir_ / "plan.html").find("<title>Tessera plan: Llama-2-7b-acme-sft on "), std::string::npos);
}

TEST_F(ModelName, WithoutNameOrPathTheFolderNamesIt) {
  const RunResult r = run_tessera(dir_, {"estimate", "--model", config(""), "--cluster", "h100:8", "--plan",
                                         "tp=1,mb=1,gbs=8,seq=4096", "--json"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(nlohmann::json::parse(r.out).at("model"), "checkpoint-1000");
}

}  // namespace
