// Data mixes: the pinned caption-like distribution, determinism, and conservation under packing.
#include <gtest/gtest.h>

#include "common/thrown_field.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "catalog/data_mixes.h"
#include "catalog/multimodal_models.h"
#include "core/error.h"
#include "formats/data_mix_json.h"
#include "formats/multimodal_json.h"
#include "plan/data_mix.h"

namespace tessera {
namespace {

constexpr std::size_t kDraws = 200'000;

// caption-like (issue 5): one image at 224/336/448/672 px with p = 0.2/0.4/0.3/0.1, text lognormal
// with median 48 and sigma 0.8 capped at 1024, 30% also generate an image.
TEST(DataMix, CaptionLikeFollowsItsPinnedDistribution) {
  const DataMix mix = load_data_mix("caption-like");
  const std::vector<Sample> s = draw_samples(mix, kDraws, 7);
  std::map<double, double> freq;
  std::vector<double> text;
  double generating = 0;
  for (const auto& x : s) {
    ASSERT_EQ(x.image_px.size(), 1u);
    freq[x.image_px[0]] += 1.0 / kDraws;
    text.push_back(static_cast<double>(x.text_tokens));
    EXPECT_LE(x.text_tokens, 1024);
    generating += x.generated_images > 0 ? 1.0 / kDraws : 0.0;
  }
  // Binomial standard error at n = 200k is ~0.001; 0.005 is five of them.
  EXPECT_NEAR(freq[224], 0.2, 0.005);
  EXPECT_NEAR(freq[336], 0.4, 0.005);
  EXPECT_NEAR(freq[448], 0.3, 0.005);
  EXPECT_NEAR(freq[672], 0.1, 0.005);
  EXPECT_NEAR(generating, 0.3, 0.005);
  std::nth_element(text.begin(), text.begin() + kDraws / 2, text.end());
  EXPECT_NEAR(text[kDraws / 2], 48.0, 1.0);
}

TEST(DataMix, DrawsAreDeterministicForASeed) {
  const DataMix mix = load_data_mix("interleaved-like");
  const auto a = draw_samples(mix, 1000, 3), b = draw_samples(mix, 1000, 3), c = draw_samples(mix, 1000, 4);
  int same = 0, differs = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].text_tokens, b[i].text_tokens);
    EXPECT_EQ(a[i].image_px, b[i].image_px);
    (a[i].text_tokens == c[i].text_tokens && a[i].image_px == c[i].image_px ? same : differs)++;
  }
  EXPECT_GT(differs, 900);
}

// Packing conserves samples: the sequences hold exactly the first K samples drawn, in order, each
// sequence within its capacity, and every encoder token of those samples is counted once.
TEST(DataMix, PackingConservesEveryTokenOfThePackedSamples) {
  const MultimodalSpec model = load_multimodal_model("mllm-72b-gen");
  const DataMix mix = load_data_mix("caption-like");
  const std::int64_t sequences = 64;
  const auto packed = pack_sequences(model, mix, sequences, 11);
  ASSERT_EQ(static_cast<std::int64_t>(packed.size()), sequences);
  std::int64_t samples = 0;
  double vit_tokens = 0, backbone = 0, generated = 0;
  for (const auto& q : packed) {
    samples += q.samples;
    vit_tokens += q.modules[0].tokens;
    backbone += q.modules[2].tokens;
    generated += q.modules[3].items;
    EXPECT_LE(q.modules[2].tokens, static_cast<double>(mix.sequence_tokens));
    // Next fit leaves less room than the largest possible sample (2304 + 1024 tokens).
    EXPECT_GT(q.modules[2].tokens, static_cast<double>(mix.sequence_tokens - 2304 - 1024));
  }
  const auto drawn = draw_samples(mix, static_cast<std::size_t>(samples), 11);
  double expect_vit = 0, expect_backbone = 0, expect_generated = 0;
  for (const auto& s : drawn) {
    const double t = std::pow(s.image_px[0] / 14.0, 2);
    expect_vit += t;
    expect_backbone += t + static_cast<double>(s.text_tokens);
    expect_generated += static_cast<double>(s.generated_images);
  }
  EXPECT_DOUBLE_EQ(vit_tokens, expect_vit);
  EXPECT_DOUBLE_EQ(backbone, expect_backbone);
  EXPECT_DOUBLE_EQ(generated, expect_generated);
}

// Text documents flow across sequences: every sequence of a text-only mix is full.
TEST(DataMix, TextOnlySequencesAreFull) {
  const auto packed = pack_sequences(load_multimodal_model("llava-1.5-7b"), load_data_mix("text-only"), 32, 5);
  ASSERT_EQ(packed.size(), 32u);
  for (const auto& q : packed) EXPECT_DOUBLE_EQ(q.modules[2].tokens, 8192.0);
}

TEST(DataMix, ASampleWithMediaLongerThanASequenceIsAnError) {
  DataMix mix = load_data_mix("video-like");
  mix.sequence_tokens = 1024;
  try {
    pack_sequences(load_multimodal_model("mllm-72b-gen"), mix, 4, 1);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.field(), "data");
  }
}

TEST(DataMix, BadMixesNameTheField) {
  auto field_of = [](const char* text) {
    return testing::thrown_field([&] { data_mix_from_json(nlohmann::json::parse(text)); });
  };
  EXPECT_EQ(field_of(R"({"images": {"sizes": [{"px": 224, "probability": 0.5}]}})"), "data.images.sizes.probability");
  EXPECT_EQ(field_of(R"({"text": {"median_tokens": -3}})"), "data.text.median_tokens");
  EXPECT_EQ(field_of(R"({"sequence_tokens": 0, "text": {"median_tokens": 10}})"), "data.sequence_tokens");
  EXPECT_EQ(field_of(R"({"audio": {"min_s": 10, "max_s": 5}})"), "data.audio.max_s");
  EXPECT_EQ(field_of(R"({"sequence_tokens": 8192})"), "data");
  EXPECT_EQ(field_of(R"({"text": {"median_tokens": 10}, "colour": 1})"), "data.colour");
}

TEST(DataMix, JsonlSamplesAreReadLineByLine) {
  const DataMix mix = data_mix_from_jsonl("{\"text_tokens\": 10, \"images\": [336]}\n\n{\"text_tokens\": 5, \"generated_images\": 1}\n",
                                          "mine");
  ASSERT_EQ(mix.samples.size(), 2u);
  EXPECT_EQ(mix.samples[0].image_px, std::vector<double>{336});
  EXPECT_EQ(mix.samples[1].generated_images, 1);
  try {
    data_mix_from_jsonl("{\"text_tokens\": 10}\n{\"text_tokens\": -1}\n", "bad");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.field(), "data.samples[1].text_tokens");
  }
  try {
    data_mix_from_jsonl("{\"text_tokens\": 10}\nnot json\n", "bad");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.field(), "data bad:2") << e.what();  // the file's name and line
  }
}

}  // namespace
}  // namespace tessera
