// Tessera's SentencePiece module: the C interface of preprocess/sentencepiece_c_api.h over
// libsentencepiece (Kudo & Richardson, EMNLP 2018 demo track), built as a shared module that the
// text tokenizer loads on its own (see the header for why).
#include "preprocess/sentencepiece_c_api.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

namespace {
void copy_error(const std::string& message, char* error, std::size_t error_size) {
  if (error == nullptr || error_size == 0) return;
  const std::size_t n = std::min(message.size(), error_size - 1);
  std::memcpy(error, message.data(), n);
  error[n] = '\0';
}
}  // namespace

extern "C" {

void* tessera_spm_load(const char* path, char* error, std::size_t error_size) {
  auto* processor = new sentencepiece::SentencePieceProcessor();
  const auto status = processor->Load(path);
  if (status.ok()) return processor;
  copy_error(status.ToString(), error, error_size);
  delete processor;
  return nullptr;
}

void tessera_spm_free(void* model) { delete static_cast<sentencepiece::SentencePieceProcessor*>(model); }

int tessera_spm_vocab_size(const void* model) {
  return static_cast<const sentencepiece::SentencePieceProcessor*>(model)->GetPieceSize();
}

long tessera_spm_encode(const void* model, const char* text, std::size_t size, std::int32_t* ids, std::size_t capacity) {
  std::vector<int> out;
  const auto* processor = static_cast<const sentencepiece::SentencePieceProcessor*>(model);
  if (!processor->Encode(std::string(text, size), &out).ok()) return -1;
  for (std::size_t i = 0; i < std::min(out.size(), capacity); ++i) ids[i] = out[i];
  return static_cast<long>(out.size());
}

long tessera_spm_decode(const void* model, const std::int32_t* ids, std::size_t count, char* text, std::size_t capacity) {
  std::string out;
  const auto* processor = static_cast<const sentencepiece::SentencePieceProcessor*>(model);
  if (!processor->Decode(std::vector<int>(ids, ids + count), &out).ok()) return -1;
  std::memcpy(text, out.data(), std::min(out.size(), capacity));
  return static_cast<long>(out.size());
}

int tessera_spm_train(const char* flags, char* error, std::size_t error_size) {
  const auto status = sentencepiece::SentencePieceTrainer::Train(flags);
  if (status.ok()) return 0;
  copy_error(status.ToString(), error, error_size);
  return -1;
}

}  // extern "C"
