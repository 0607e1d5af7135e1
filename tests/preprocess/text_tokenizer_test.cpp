// preprocess/text_tokenizer.h: on a BPE model trained here with spm_train (200 pieces), ids stay
// inside the vocabulary, decoding gives the text back, the same text gives the same ids and
// different texts different ones, BPE merges make fewer ids than bytes, and missing or broken
// model files throw Error("tokenizer") naming the path.
#include "preprocess/text_tokenizer.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "common/thrown_field.h"
#include "core/error.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;
using testing::thrown_field;

constexpr int kVocabSize = 200;

class TextTokenizerTest : public ::testing::Test {
 protected:
  // Trains one model for the whole suite: 512 sentences, every subject x verb x object.
  static void SetUpTestSuite() {
    dir_ = new fs::path(fs::temp_directory_path() / ("tessera_tokenizer_" + std::to_string(::getpid())));
    fs::create_directories(*dir_);
    const std::vector<std::string> subjects{"the cat", "a dog", "the pilot", "my neighbour",
                                            "the old sailor", "a small robot", "the teacher", "every student"};
    const std::vector<std::string> verbs{"reads", "paints", "watches", "carries",
                                         "follows", "builds", "finds", "remembers"};
    const std::vector<std::string> objects{"a red kite", "the morning news", "seven blue boxes", "an empty harbour",
                                           "the quiet garden", "a broken clock", "fresh bread", "the northern lights"};
    std::ofstream corpus(*dir_ / "corpus.txt");
    for (const auto& s : subjects)
      for (const auto& v : verbs)
        for (const auto& o : objects) corpus << s << ' ' << v << ' ' << o << ".\n";
    corpus.close();
    const std::string command = "spm_train --input='" + (*dir_ / "corpus.txt").string() + "' --model_prefix='" +
                                (*dir_ / "m").string() + "' --vocab_size=" + std::to_string(kVocabSize) +
                                " --model_type=bpe > '" + (*dir_ / "train.log").string() + "' 2>&1";
    train_status_ = std::system(command.c_str());
  }
  static void TearDownTestSuite() {
    fs::remove_all(*dir_);
    delete dir_;
    dir_ = nullptr;
  }
  void SetUp() override { ASSERT_EQ(train_status_, 0) << "spm_train failed; see " << (*dir_ / "train.log"); }

  static TextTokenizer tokenizer() { return TextTokenizer::load((*dir_ / "m.model").string()); }

  static fs::path* dir_;
  static int train_status_;
};

fs::path* TextTokenizerTest::dir_ = nullptr;
int TextTokenizerTest::train_status_ = -1;

TEST_F(TextTokenizerTest, IdsAreInsideTheVocabularyAndDecodeBackToTheText) {
  const TextTokenizer t = tokenizer();
  EXPECT_EQ(t.vocab_size(), kVocabSize);
  // One corpus sentence and one new combination of its words.
  for (const std::string text : {"the old sailor finds a broken clock.", "a quiet robot reads fresh news"}) {
    const std::vector<std::int32_t> ids = t.encode(text);
    ASSERT_FALSE(ids.empty());
    for (const std::int32_t id : ids) {
      EXPECT_GE(id, 0);
      EXPECT_LT(id, kVocabSize);
    }
    EXPECT_EQ(t.decode(ids), text);
  }
}

TEST_F(TextTokenizerTest, SameTextSameIdsDifferentTextDifferentIds) {
  const TextTokenizer t = tokenizer();
  const std::string a = "the teacher paints the northern lights.";
  EXPECT_EQ(t.encode(a), t.encode(a));
  EXPECT_EQ(t.encode(a), tokenizer().encode(a));  // and across loads of the same file
  EXPECT_NE(t.encode(a), t.encode("the teacher paints the morning news."));
  EXPECT_NE(t.encode("the cat"), t.encode("the dog"));
  EXPECT_TRUE(t.encode("").empty());
}

TEST_F(TextTokenizerTest, BpeMergesMakeFewerIdsThanBytes) {
  // 200 pieces leave room for merges of the corpus's frequent words ("the", "reads", ...).
  const std::string text = "the pilot remembers the morning news.";
  EXPECT_LT(tokenizer().encode(text).size(), text.size());
}

TEST_F(TextTokenizerTest, MovedTokenizerKeepsWorking) {
  TextTokenizer t = tokenizer();
  const auto ids = t.encode("a dog builds a red kite.");
  TextTokenizer moved = std::move(t);
  EXPECT_EQ(moved.encode("a dog builds a red kite."), ids);
}

TEST_F(TextTokenizerTest, OutOfRangeIdsThrowOnDecode) {
  const TextTokenizer t = tokenizer();
  EXPECT_EQ(thrown_field([&] { t.decode(std::vector<std::int32_t>{3, kVocabSize}); }), "token ids");
  EXPECT_EQ(thrown_field([&] { t.decode(std::vector<std::int32_t>{-1}); }), "token ids");
}

TEST(TextTokenizer, MissingOrBrokenModelThrowsNamingThePath) {
  const fs::path missing = fs::temp_directory_path() / "tessera_no_such_tokenizer.model";
  try {
    TextTokenizer::load(missing.string());
    ADD_FAILURE() << "no error for a missing model";
  } catch (const Error& e) {
    EXPECT_EQ(e.field(), "tokenizer");
    EXPECT_NE(e.problem().find(missing.string()), std::string::npos) << e.what();
    EXPECT_EQ(e.allowed(), "a SentencePiece .model file (spm_train)");
  }
  const fs::path broken = fs::temp_directory_path() / ("tessera_broken_" + std::to_string(::getpid()) + ".model");
  std::ofstream(broken) << "this is not a protobuf";
  EXPECT_EQ(thrown_field([&] { TextTokenizer::load(broken.string()); }), "tokenizer");
  fs::remove(broken);
}

}  // namespace
}  // namespace tessera
