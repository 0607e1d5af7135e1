// SvgCanvas: builds one inline <svg> element from primitives (rect, line, polyline, polygon,
// circle, marker, text, titled groups), each with a CSS class. Also the report's fixed colour
// palette and marker shapes. The element has no xmlns: inline SVG in HTML5 needs none, and the
// page must contain no URL of any kind.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace tessera::report {

struct PointPx {
  double x_px = 0;
  double y_px = 0;
};

// How an element is painted; "none" leaves fill or stroke out.
struct Paint {
  std::string fill = "none";
  std::string stroke = "none";
  double stroke_width_px = 1;
  std::string dash;  // stroke-dasharray, e.g. "4 3"; empty for solid
};

enum class TextAnchor { start, middle, end };
enum class MarkerShape { circle, square, triangle, diamond, cross };

// Okabe-Ito colours (colour-blind safe), ordered so neighbours differ in lightness and so stay
// apart in grayscale print; paired with distinct marker shapes. Both cycle past the end.
const std::string& palette_colour(std::size_t index);
MarkerShape palette_shape(std::size_t index);

class SvgCanvas {
 public:
  // Throws tessera::Error ("width_px", "height_px") unless both are positive and finite.
  SvgCanvas(double width_px, double height_px, std::string aria_label);

  void rect(double x_px, double y_px, double width_px, double height_px, std::string_view css_class,
            const Paint& paint);
  void line(PointPx from, PointPx to, std::string_view css_class, const Paint& paint);
  void polyline(const std::vector<PointPx>& points, std::string_view css_class, const Paint& paint);
  void polygon(const std::vector<PointPx>& points, std::string_view css_class, const Paint& paint);
  void circle(PointPx centre, double radius_px, std::string_view css_class, const Paint& paint);
  // A marker of `shape` that fits a circle of `radius_px` around `centre`.
  void marker(MarkerShape shape, PointPx centre, double radius_px, std::string_view css_class, const Paint& paint);
  void text(PointPx at, std::string_view content, TextAnchor anchor, std::string_view css_class,
            double font_size_px = kDefaultFontSizePx);

  // Groups nest; a non-empty `title` becomes the group's tooltip (<title>).
  void begin_group(std::string_view css_class, std::string_view title = "");
  void end_group();

  double width_px() const { return width_px_; }
  double height_px() const { return height_px_; }
  // Throws tessera::Error ("group") while a group is still open.
  std::string to_string() const;

  static constexpr double kDefaultFontSizePx = 12;

 private:
  void open_element(std::string_view tag, std::string_view css_class);
  void append_paint(const Paint& paint);
  void append_points(const std::vector<PointPx>& points, std::string_view field);

  double width_px_;
  double height_px_;
  std::string aria_label_;
  std::string body_;
  int open_groups_ = 0;
};

}  // namespace tessera::report
