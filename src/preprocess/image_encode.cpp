#include "preprocess/image_encode.h"

#include <csetjmp>
#include <cstddef>
#include <cstdio>  // before jpeglib.h, which uses FILE and size_t without including them
#include <new>
#include <string>
#include <utility>

#include <jpeglib.h>
#include <png.h>

#include "core/error.h"

namespace tessera {

namespace {

// libjpeg's quality scale (jcparam.c jpeg_quality_scaling: 1 is worst, 100 is best).
constexpr int kMinQuality = 1, kMaxQuality = 100;
// The first buffer is a quarter of the raw pixels (6 bits per pixel) plus room for the headers
// (a JFIF header with its quantisation and Huffman tables is about 600 bytes); when libjpeg fills
// it, it doubles, so the guess only saves copies and never limits the output.
constexpr std::size_t kRawBytesPerBufferByte = 4;
constexpr std::size_t kHeaderBytes = 4096;

// As in image.cpp: libjpeg's error_exit must not return and no C++ exception may cross libjpeg's
// C frames, so the handler longjmps to run_jpeg's setjmp; every object with a destructor lives in
// JpegEncoder, above the setjmp (C++20 [csetjmp.syn]/2).
struct JpegEncoder {
  jpeg_compress_struct info{};  // zeroed: jpeg_destroy_compress is a no-op until created
  jpeg_error_mgr errors{};
  jpeg_destination_mgr destination{};
  std::vector<std::uint8_t> buffer;
  std::jmp_buf jump{};
  char message[JMSG_LENGTH_MAX] = {};  // libjpeg's recommended format_message buffer (jpeglib.h)

  JpegEncoder();
  ~JpegEncoder() { jpeg_destroy_compress(&info); }
  JpegEncoder(const JpegEncoder&) = delete;
  JpegEncoder& operator=(const JpegEncoder&) = delete;
};

JpegEncoder* encoder_of(j_compress_ptr info) { return static_cast<JpegEncoder*>(info->client_data); }

void jpeg_encode_fail(j_common_ptr info) {
  auto* encoder = static_cast<JpegEncoder*>(info->client_data);
  (*info->err->format_message)(info, encoder->message);
  std::longjmp(encoder->jump, 1);
}

void jpeg_ignore_message(j_common_ptr, int) {}  // the encoder warns only about its own misuse

void start_buffer(j_compress_ptr info) {
  JpegEncoder* encoder = encoder_of(info);
  encoder->destination.next_output_byte = encoder->buffer.data();
  encoder->destination.free_in_buffer = encoder->buffer.size();
}

// Doubles the buffer; false when memory runs out (the exception must not reach libjpeg).
bool grow(std::vector<std::uint8_t>& buffer) noexcept {
  try {
    buffer.resize(buffer.size() * 2);
    return true;
  } catch (const std::bad_alloc&) {
    return false;
  }
}

// libjpeg calls this when the buffer is full (libjpeg.txt "Compression data destination manager").
boolean continue_buffer(j_compress_ptr info) {
  JpegEncoder* encoder = encoder_of(info);
  const std::size_t used = encoder->buffer.size();
  if (!grow(encoder->buffer)) {
    std::snprintf(encoder->message, sizeof encoder->message, "out of memory");
    std::longjmp(encoder->jump, 1);
  }
  encoder->destination.next_output_byte = encoder->buffer.data() + used;
  encoder->destination.free_in_buffer = encoder->buffer.size() - used;
  return TRUE;
}

void end_buffer(j_compress_ptr) {}  // the caller trims the buffer to the bytes written

JpegEncoder::JpegEncoder() {
  info.err = jpeg_std_error(&errors);
  errors.error_exit = jpeg_encode_fail;
  errors.emit_message = jpeg_ignore_message;
  info.client_data = this;  // kept by jpeg_create_compress (jcapimin.c)
  destination.init_destination = start_buffer;
  destination.empty_output_buffer = continue_buffer;
  destination.term_destination = end_buffer;
}

void write_jpeg(JpegEncoder& e, const Image& image, int quality) {
  jpeg_create_compress(&e.info);
  e.info.dest = &e.destination;
  e.info.image_width = static_cast<JDIMENSION>(image.width);
  e.info.image_height = static_cast<JDIMENSION>(image.height);
  e.info.input_components = kRgbChannels;
  e.info.in_color_space = JCS_RGB;
  jpeg_set_defaults(&e.info);
  jpeg_set_quality(&e.info, quality, TRUE);  // TRUE: baseline-compatible 8-bit tables
  jpeg_start_compress(&e.info, TRUE);
  const std::size_t stride = static_cast<std::size_t>(image.width) * kRgbChannels;
  while (e.info.next_scanline < e.info.image_height) {
    // libjpeg's API takes non-const rows but only reads them when compressing.
    JSAMPROW row = const_cast<JSAMPLE*>(image.rgb.data() + e.info.next_scanline * stride);
    jpeg_write_scanlines(&e.info, &row, 1);
  }
  jpeg_finish_compress(&e.info);
}

bool run_jpeg(JpegEncoder& e, const Image& image, int quality) {
  if (setjmp(e.jump) != 0) return false;
  write_jpeg(e, image, quality);
  return true;
}

}  // namespace

std::vector<std::uint8_t> encode_jpeg(const Image& image, int quality) {
  check_image(image, "image");
  if (quality < kMinQuality || quality > kMaxQuality)
    throw Error("quality", "is " + std::to_string(quality), "an integer from 1 to 100");
  JpegEncoder encoder;
  encoder.buffer.resize(image.rgb.size() / kRawBytesPerBufferByte + kHeaderBytes);
  if (!run_jpeg(encoder, image, quality))
    throw Error("image", std::string("libjpeg could not encode it: ") + encoder.message,
                "an RGB image libjpeg accepts (at most 65500 pixels a side)");
  encoder.buffer.resize(encoder.buffer.size() - encoder.destination.free_in_buffer);
  return std::move(encoder.buffer);
}

std::vector<std::uint8_t> encode_png(const Image& image) {
  check_image(image, "image");
  // libpng's simplified API handles its errors itself (it reports them in image.message) and
  // PNG_IMAGE_PNG_SIZE_MAX bounds the output, so one pass into one buffer suffices (png.h).
  png_image png{};
  png.version = PNG_IMAGE_VERSION;
  png.width = static_cast<png_uint_32>(image.width);
  png.height = static_cast<png_uint_32>(image.height);
  png.format = PNG_FORMAT_RGB;
  png_alloc_size_t size = PNG_IMAGE_PNG_SIZE_MAX(png);
  std::vector<std::uint8_t> out(size);
  if (!png_image_write_to_memory(&png, out.data(), &size, 0, image.rgb.data(), 0, nullptr))
    throw Error("image", std::string("libpng could not encode it: ") + png.message,
                "an RGB image libpng accepts");
  out.resize(size);
  return out;
}

}  // namespace tessera
