// The C interface of Tessera's SentencePiece module (src/preprocess/sentencepiece_module/), which
// the text tokenizer loads with dlopen. Why a module: Debian's libsentencepiece.so.0 carries its
// own copy of protobuf-lite and exports its symbols (1,602 of them), which collide with
// libprotobuf.so.32 that gRPC's generated code needs: a process that links both crashes in
// libprotobuf's static initialisers (seen: DescriptorPool::InternalAddGeneratedFile resolving
// MergeFromImpl into libsentencepiece). Loaded RTLD_LOCAL | RTLD_DEEPBIND, the module and its
// libsentencepiece bind to their own protobuf and the process's libprotobuf never sees them.
#pragma once

#include <cstddef>
#include <cstdint>

extern "C" {
// A loaded model, or null with the reason in `error`.
void* tessera_spm_load(const char* path, char* error, std::size_t error_size);
void tessera_spm_free(void* model);
int tessera_spm_vocab_size(const void* model);
// Writes at most `capacity` ids; returns how many the text has (call again with more room when
// that is larger), or -1 when encoding failed.
long tessera_spm_encode(const void* model, const char* text, std::size_t size, std::int32_t* ids, std::size_t capacity);
// Writes at most `capacity` bytes of the decoded text; returns its length, or -1 on failure.
long tessera_spm_decode(const void* model, const std::int32_t* ids, std::size_t count, char* text, std::size_t capacity);
// sentencepiece::SentencePieceTrainer::Train with spm_train's flags ("--input=... --model_prefix=...");
// 0, or -1 with the reason in `error`.
int tessera_spm_train(const char* flags, char* error, std::size_t error_size);
}
