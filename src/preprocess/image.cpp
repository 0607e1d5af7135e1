#include "preprocess/image.h"

#include <algorithm>
#include <array>
#include <csetjmp>
#include <cstddef>
#include <cstdio>  // before jpeglib.h, which uses FILE and size_t without including them
#include <cstring>
#include <filesystem>
#include <fstream>

#include <jpeglib.h>
#include <jerror.h>  // after jpeglib.h: the JWRN_ message codes
#include <png.h>

#include "core/error.h"

// libjpeg and libpng report errors by calling a handler that must not return (libjpeg.txt "Error
// handling"; libpng-manual.txt "Setjmp/longjmp issues"). Both are C libraries, so a C++ exception
// must not cross their frames; the handlers here longjmp back to a setjmp in run_jpeg / run_png,
// which then return false and the caller throws tessera::Error. A setjmp/longjmp pair is only
// defined when no non-trivial destructor would run between them (C++20 [csetjmp.syn]/2), so every
// object with a destructor (the library structs, the row table, the output) lives in the caller's
// frame, above the setjmp, and read_jpeg / read_png hold only pointers and integers.

namespace tessera {

namespace {

constexpr const char* kAllowed = "a readable JPEG or PNG file";
// JPEG: SOI (FF D8) followed by the first marker's FF (ITU-T T.81 B.1.1.3, B.2.1).
constexpr std::array<std::uint8_t, 3> kJpegMagic{0xFF, 0xD8, 0xFF};
// PNG: the 8-byte signature (ISO/IEC 15948:2004 5.2).
constexpr std::array<std::uint8_t, 8> kPngMagic{0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A};
// Files over 10 bytes per allowed pixel are refused unread: the densest image encoding is a 16-bit
// RGBA PNG stored uncompressed, 8 bytes per pixel plus one filter byte per row (ISO/IEC 15948 9.2)
// and 5 bytes per 65,535 of deflate's stored blocks (RFC 1951 3.2.4); only gigabytes of metadata
// could make a file within the pixel limit larger.
constexpr std::int64_t kMaxFileBytes = 10 * kMaxImagePixels;
// Room for one library message: libjpeg's recommended format_message buffer (jpeglib.h
// JMSG_LENGTH_MAX); libpng's messages are shorter and snprintf cuts any longer one.
constexpr std::size_t kMessageBytes = JMSG_LENGTH_MAX;

[[noreturn]] void fail(const std::string& name, const std::string& problem) {
  throw Error(name, problem, kAllowed);
}

template <std::size_t N>
bool starts_with(std::span<const std::uint8_t> bytes, const std::array<std::uint8_t, N>& magic) {
  return bytes.size() >= N && std::equal(magic.begin(), magic.end(), bytes.begin());
}

// The first few bytes in hex, so an unknown format (GIF: 47 49 46 38, WebP: 52 49 46 46) is easy
// to recognise from the error alone.
std::string leading_hex(std::span<const std::uint8_t> bytes) {
  constexpr std::size_t kShown = 8;
  std::string text;
  for (std::size_t i = 0; i < std::min(bytes.size(), kShown); ++i) {
    char byte[4];
    std::snprintf(byte, sizeof byte, "%02X ", bytes[i]);
    text += byte;
  }
  return text.substr(0, text.size() - 1);
}

// Rejects a header's size before anything is allocated for it.
void check_size(std::uint64_t width, std::uint64_t height, const std::string& name) {
  if (width == 0 || height == 0) fail(name, "the header gives an empty image");
  if (width > static_cast<std::uint64_t>(kMaxImagePixels) ||
      width * height > static_cast<std::uint64_t>(kMaxImagePixels))
    fail(name, "the header gives " + std::to_string(width) + " x " + std::to_string(height) +
                   " pixels, more than the limit of 2^28 pixels");
}

void size_output(Image& out, std::uint64_t width, std::uint64_t height) {
  out.width = static_cast<int>(width);
  out.height = static_cast<int>(height);
  out.rgb.resize(static_cast<std::size_t>(width * height) * kRgbChannels);
}

// ---- JPEG (libjpeg-turbo) -------------------------------------------------------------------

struct JpegDecoder {
  jpeg_decompress_struct info{};  // zeroed: jpeg_destroy_decompress is a no-op until created
  jpeg_error_mgr errors{};
  std::jmp_buf jump{};
  char message[kMessageBytes] = {};

  JpegDecoder();
  ~JpegDecoder() { jpeg_destroy_decompress(&info); }
  JpegDecoder(const JpegDecoder&) = delete;
  JpegDecoder& operator=(const JpegDecoder&) = delete;
};

void jpeg_fail(j_common_ptr info) {
  auto* decoder = static_cast<JpegDecoder*>(info->client_data);
  (*info->err->format_message)(info, decoder->message);
  std::longjmp(decoder->jump, 1);
}

// libjpeg only warns about data it cannot decode and fills the rest with gray (a truncated file
// gives JWRN_JPEG_EOF, "Premature end of JPEG file"). A training sample must be the real picture,
// so every warning is an error except those that leave the pixels intact: stray bytes between
// markers, a newer JFIF version number and an unreadable ICC profile (colour is not managed here).
void jpeg_message(j_common_ptr info, int level) {
  constexpr int kWarning = -1;  // msg_level of a warning (jpeglib.h, emit_message)
  const int code = info->err->msg_code;
  if (level != kWarning || code == JWRN_EXTRANEOUS_DATA || code == JWRN_JFIF_MAJOR ||
      code == JWRN_BOGUS_ICC)
    return;
  jpeg_fail(info);
}

JpegDecoder::JpegDecoder() {
  info.err = jpeg_std_error(&errors);
  errors.error_exit = jpeg_fail;
  errors.emit_message = jpeg_message;
  info.client_data = this;  // kept by jpeg_create_decompress (jdapimin.c)
}

void read_jpeg(JpegDecoder& d, std::span<const std::uint8_t> bytes, const std::string& name,
               Image& out) {
  jpeg_create_decompress(&d.info);
  jpeg_mem_src(&d.info, bytes.data(), static_cast<unsigned long>(bytes.size()));
  jpeg_read_header(&d.info, TRUE);
  if (d.info.jpeg_color_space == JCS_CMYK || d.info.jpeg_color_space == JCS_YCCK)
    fail(name, "CMYK JPEG: libjpeg cannot convert it to RGB (convert the file to RGB first)");
  check_size(d.info.image_width, d.info.image_height, name);
  d.info.out_color_space = JCS_RGB;  // libjpeg converts grayscale and YCbCr to RGB
  jpeg_start_decompress(&d.info);
  if (d.info.output_components != kRgbChannels) fail(name, "libjpeg did not produce RGB");
  size_output(out, d.info.output_width, d.info.output_height);
  const std::size_t stride = static_cast<std::size_t>(out.width) * kRgbChannels;
  while (d.info.output_scanline < d.info.output_height) {
    JSAMPROW row = out.rgb.data() + d.info.output_scanline * stride;
    if (jpeg_read_scanlines(&d.info, &row, 1) != 1) fail(name, "libjpeg returned no scanline");
  }
  jpeg_finish_decompress(&d.info);  // reads up to EOI, so a missing end is reported too
}

bool run_jpeg(JpegDecoder& d, std::span<const std::uint8_t> bytes, const std::string& name,
              Image& out) {
  if (setjmp(d.jump) != 0) return false;
  read_jpeg(d, bytes, name, out);
  return true;
}

Image decode_jpeg(std::span<const std::uint8_t> bytes, const std::string& name) {
  JpegDecoder decoder;
  Image out;
  if (!run_jpeg(decoder, bytes, name, out))
    fail(name, std::string("unreadable JPEG: ") + decoder.message);
  return out;
}

// ---- PNG (libpng 1.6) -----------------------------------------------------------------------

struct PngDecoder {
  png_structp png = nullptr;
  png_infop info = nullptr;
  std::span<const std::uint8_t> bytes;
  std::size_t offset = 0;
  std::vector<png_bytep> rows;
  std::jmp_buf jump{};
  char message[kMessageBytes] = {};

  ~PngDecoder() { png_destroy_read_struct(&png, &info, nullptr); }  // accepts null pointers
};

void png_fail(png_structp png, png_const_charp message) {
  auto* decoder = static_cast<PngDecoder*>(png_get_error_ptr(png));
  std::snprintf(decoder->message, sizeof decoder->message, "%s", message);
  std::longjmp(decoder->jump, 1);
}

// libpng warns only about ancillary chunks (e.g. "iCCP: known incorrect sRGB profile") and data
// after the image, none of which change the pixels; errors in the image data are errors.
void png_ignore_warning(png_structp, png_const_charp) {}

void png_read_bytes(png_structp png, png_bytep data, std::size_t length) {
  auto* decoder = static_cast<PngDecoder*>(png_get_io_ptr(png));
  if (length > decoder->bytes.size() - decoder->offset)
    png_error(png, "the file ends before the image does (truncated)");
  std::memcpy(data, decoder->bytes.data() + decoder->offset, length);
  decoder->offset += length;
}

// Transforms to 8-bit RGB as Pillow's convert("RGB") does (libpng-manual.txt "Transformations").
void request_rgb8(png_structp png, png_infop info) {
  const int color = png_get_color_type(png, info);
  if (color == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
  if (color == PNG_COLOR_TYPE_GRAY && png_get_bit_depth(png, info) < 8)
    png_set_expand_gray_1_2_4_to_8(png);
  if (color == PNG_COLOR_TYPE_GRAY || color == PNG_COLOR_TYPE_GRAY_ALPHA) png_set_gray_to_rgb(png);
  png_set_strip_16(png);     // keeps each 16-bit sample's high byte
  png_set_strip_alpha(png);  // also drops the alpha a palette's tRNS expands to
  png_set_interlace_handling(png);  // Adam7: png_read_image then runs all seven passes
  png_read_update_info(png, info);
}

void read_png(PngDecoder& d, const std::string& name, Image& out) {
  d.png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &d, png_fail, png_ignore_warning);
  if (d.png != nullptr) d.info = png_create_info_struct(d.png);
  if (d.info == nullptr) fail(name, "libpng could not allocate its decoder");
  png_set_read_fn(d.png, &d, png_read_bytes);
  png_read_info(d.png, d.info);
  check_size(png_get_image_width(d.png, d.info), png_get_image_height(d.png, d.info), name);
  request_rgb8(d.png, d.info);
  if (png_get_channels(d.png, d.info) != kRgbChannels || png_get_bit_depth(d.png, d.info) != 8)
    fail(name, "libpng did not produce 8-bit RGB");
  size_output(out, png_get_image_width(d.png, d.info), png_get_image_height(d.png, d.info));
  d.rows.resize(static_cast<std::size_t>(out.height));
  const std::size_t stride = static_cast<std::size_t>(out.width) * kRgbChannels;
  for (std::size_t y = 0; y < d.rows.size(); ++y) d.rows[y] = out.rgb.data() + y * stride;
  png_read_image(d.png, d.rows.data());
  png_read_end(d.png, nullptr);  // reads through IEND, so a cut-off end is reported too
}

bool run_png(PngDecoder& d, const std::string& name, Image& out) {
  if (setjmp(d.jump) != 0) return false;
  read_png(d, name, out);
  return true;
}

Image decode_png(std::span<const std::uint8_t> bytes, const std::string& name) {
  PngDecoder decoder;
  decoder.bytes = bytes;
  Image out;
  if (!run_png(decoder, name, out)) fail(name, std::string("unreadable PNG: ") + decoder.message);
  return out;
}

}  // namespace

Image decode_image(std::span<const std::uint8_t> bytes, const std::string& name) {
  if (bytes.empty()) fail(name, "the file is empty");
  if (starts_with(bytes, kJpegMagic)) return decode_jpeg(bytes, name);
  if (starts_with(bytes, kPngMagic)) return decode_png(bytes, name);
  fail(name, "not a JPEG or PNG file (it starts with " + leading_hex(bytes) + ")");
}

Image read_image_file(const std::string& path, const std::string& name) {
  std::error_code error;
  const std::uintmax_t size = std::filesystem::file_size(path, error);
  if (error) fail(name, "cannot read " + path + ": " + error.message());
  if (size > static_cast<std::uintmax_t>(kMaxFileBytes))
    fail(name, path + " has " + std::to_string(size) + " bytes, more than any image within 2^28 pixels");
  std::vector<std::uint8_t> bytes(static_cast<std::size_t>(size));
  std::ifstream in(path, std::ios::binary);
  in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!in || in.gcount() != static_cast<std::streamsize>(bytes.size()))
    fail(name, "cannot read " + path + " to its end");
  return decode_image(bytes, name);
}

void check_image(const Image& image, const std::string& field) {
  constexpr const char* kValid = "a decoded image: width and height >= 1, at most 2^28 pixels";
  if (image.width < 1 || image.height < 1 ||
      std::int64_t{image.width} * image.height > kMaxImagePixels)
    throw Error(field, "the image is " + std::to_string(image.width) + " x " +
                           std::to_string(image.height) + " pixels", kValid);
  const std::size_t expected =
      static_cast<std::size_t>(image.width) * static_cast<std::size_t>(image.height) * kRgbChannels;
  if (image.rgb.size() != expected)
    throw Error(field, "holds " + std::to_string(image.rgb.size()) + " bytes for " +
                           std::to_string(expected) + " (width x height x 3)", kValid);
}

}  // namespace tessera
