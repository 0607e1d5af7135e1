#include "preprocess/text_tokenizer.h"

#include <dlfcn.h>

#include <array>
#include <utility>

#include "core/error.h"
#include "preprocess/sentencepiece_c_api.h"

namespace tessera {

namespace {

constexpr const char* kAllowedModel = "a SentencePiece .model file (spm_train)";
// The libprotobuf Debian's gRPC links (bookworm: protobuf 3.21, soname 32).
constexpr const char* kProtobufLibrary = "libprotobuf.so.32";
// The longest error text the module hands back.
constexpr std::size_t kErrorBytes = 512;

// ASan refuses RTLD_DEEPBIND (its interceptors must see every allocation): a sanitizer build cannot
// isolate the module, and tokenizes only in a process without libprotobuf.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

}  // namespace

struct SentencePieceModule {
  decltype(&tessera_spm_load) load = nullptr;
  decltype(&tessera_spm_free) free = nullptr;
  decltype(&tessera_spm_vocab_size) vocab_size = nullptr;
  decltype(&tessera_spm_encode) encode = nullptr;
  decltype(&tessera_spm_decode) decode = nullptr;
  decltype(&tessera_spm_train) train = nullptr;
};

namespace {

template <typename F>
F symbol(void* handle, const char* name) {
  void* address = dlsym(handle, name);
  if (address == nullptr) throw Error("tokenizer", std::string("the SentencePiece module lacks ") + name, "a Tessera build's module");
  return reinterpret_cast<F>(address);
}

// Whether this process has loaded the libprotobuf that SentencePiece's copy collides with.
bool protobuf_loaded() { return dlopen(kProtobufLibrary, RTLD_NOW | RTLD_NOLOAD) != nullptr; }

SentencePieceModule open_module() {
  // RTLD_DEEPBIND only where it is needed: a library bound deep resolves libstdc++'s std::cerr to
  // libstdc++'s own copy, not the executable's copy-relocated one, and crashes writing to it in
  // an executable that uses std::cerr itself (seen: a gtest binary, in SentencePieceTrainer's log).
  const bool isolate = protobuf_loaded();
  if (kSanitized && isolate)
    throw Error("tokenizer", "a sanitizer build cannot isolate SentencePiece from this process's libprotobuf",
                "the Release build (build/bin/tessera) for tokenization");
  const int flags = RTLD_NOW | RTLD_LOCAL | (isolate ? RTLD_DEEPBIND : 0);
  void* handle = dlopen(TESSERA_SENTENCEPIECE_MODULE, flags);
  if (handle == nullptr)
    throw Error("tokenizer", std::string("cannot load the SentencePiece module: ") + dlerror(),
                std::string("the module built beside Tessera (") + TESSERA_SENTENCEPIECE_MODULE + ")");
  SentencePieceModule m;
  m.load = symbol<decltype(m.load)>(handle, "tessera_spm_load");
  m.free = symbol<decltype(m.free)>(handle, "tessera_spm_free");
  m.vocab_size = symbol<decltype(m.vocab_size)>(handle, "tessera_spm_vocab_size");
  m.encode = symbol<decltype(m.encode)>(handle, "tessera_spm_encode");
  m.decode = symbol<decltype(m.decode)>(handle, "tessera_spm_decode");
  m.train = symbol<decltype(m.train)>(handle, "tessera_spm_train");
  return m;  // the handle stays open for the process's life, as the models that use it do
}

// Loaded once per process, on first use (thread-safe static initialisation).
const SentencePieceModule& module() {
  static const SentencePieceModule m = open_module();
  return m;
}

}  // namespace

TextTokenizer::TextTokenizer(const SentencePieceModule* module, void* model) : module_(module), model_(model) {}
TextTokenizer::TextTokenizer(TextTokenizer&& other) noexcept
    : module_(other.module_), model_(std::exchange(other.model_, nullptr)) {}
TextTokenizer& TextTokenizer::operator=(TextTokenizer&& other) noexcept {
  if (this != &other) {
    if (model_ != nullptr) module_->free(model_);
    module_ = other.module_;
    model_ = std::exchange(other.model_, nullptr);
  }
  return *this;
}
TextTokenizer::~TextTokenizer() {
  if (model_ != nullptr) module_->free(model_);
}

TextTokenizer TextTokenizer::load(const std::string& model_path) {
  const SentencePieceModule& m = module();
  std::array<char, kErrorBytes> error{};
  void* model = m.load(model_path.c_str(), error.data(), error.size());
  if (model == nullptr) throw Error("tokenizer", "cannot load " + model_path + ": " + error.data(), kAllowedModel);
  return TextTokenizer(&m, model);
}

std::vector<std::int32_t> TextTokenizer::encode(std::string_view text) const {
  std::vector<std::int32_t> ids(text.size() + 1);  // SentencePiece makes at most one id per byte (+1 for safety)
  long n = module_->encode(model_, text.data(), text.size(), ids.data(), ids.size());
  if (n > static_cast<long>(ids.size())) {
    ids.resize(static_cast<std::size_t>(n));
    n = module_->encode(model_, text.data(), text.size(), ids.data(), ids.size());
  }
  if (n < 0) throw Error("text", "SentencePiece cannot encode it", "UTF-8 text");
  ids.resize(static_cast<std::size_t>(n));
  return ids;
}

std::string TextTokenizer::decode(std::span<const std::int32_t> ids) const {
  const int vocab = vocab_size();
  for (const std::int32_t id : ids)
    if (id < 0 || id >= vocab)
      throw Error("token ids", "contain " + std::to_string(id),
                  "0 to " + std::to_string(vocab - 1) + " (the model's vocabulary)");
  std::string text(64 + 16 * ids.size(), '\0');
  long n = module_->decode(model_, ids.data(), ids.size(), text.data(), text.size());
  if (n > static_cast<long>(text.size())) {
    text.resize(static_cast<std::size_t>(n));
    n = module_->decode(model_, ids.data(), ids.size(), text.data(), text.size());
  }
  if (n < 0) throw Error("token ids", "SentencePiece cannot decode them", "ids of the model's vocabulary");
  text.resize(static_cast<std::size_t>(n));
  return text;
}

int TextTokenizer::vocab_size() const { return module_->vocab_size(model_); }

void train_tokenizer(const std::string& corpus_path, const std::string& model_prefix, int vocab_size) {
  // spm_train's flags: BPE (what Llama 2 and Gemma use), every character kept, and at most
  // vocab_size pieces (fewer when the corpus has fewer: hard_vocab_limit off).
  const std::string flags = "--input=" + corpus_path + " --model_prefix=" + model_prefix +
                            " --vocab_size=" + std::to_string(vocab_size) +
                            " --model_type=bpe --character_coverage=1.0 --hard_vocab_limit=false --minloglevel=2";
  std::array<char, kErrorBytes> error{};
  if (module().train(flags.c_str(), error.data(), error.size()) != 0)
    throw Error("tokenizer", "training on " + corpus_path + " failed: " + error.data(), "a text corpus with enough distinct text");
}

}  // namespace tessera
