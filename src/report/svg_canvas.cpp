#include "report/svg_canvas.h"

#include <array>
#include <cmath>

#include "core/checks.h"
#include "core/error.h"
#include "report/html_text.h"

namespace tessera::report {

namespace {

// Blue, orange, bluish green, vermillion, reddish purple, black, sky blue, yellow-brown: yellow
// itself is left out, it vanishes on white paper.
const std::array<std::string, 8> kPalette = {"#0072B2", "#E69F00", "#009E73", "#D55E00",
                                             "#CC79A7", "#000000", "#56B4E9", "#B8860B"};
constexpr std::array<MarkerShape, 5> kShapes = {MarkerShape::circle, MarkerShape::square, MarkerShape::triangle,
                                                MarkerShape::diamond, MarkerShape::cross};
constexpr double kMaxCanvasPx = 1e6;
constexpr double kSqrt3 = 1.7320508075688772;

void require_length(std::string_view field, double value_px) {
  require_non_negative_real(std::string(field), value_px, kMaxCanvasPx);
}

std::string_view anchor_name(TextAnchor anchor) {
  switch (anchor) {
    case TextAnchor::start:
      return "start";
    case TextAnchor::middle:
      return "middle";
    case TextAnchor::end:
      return "end";
  }
  return "start";
}

}  // namespace

const std::string& palette_colour(std::size_t index) { return kPalette[index % kPalette.size()]; }
MarkerShape palette_shape(std::size_t index) { return kShapes[index % kShapes.size()]; }

SvgCanvas::SvgCanvas(double width_px, double height_px, std::string aria_label)
    : width_px_(width_px), height_px_(height_px), aria_label_(std::move(aria_label)) {
  require_positive_real("width_px", width_px, kMaxCanvasPx);
  require_positive_real("height_px", height_px, kMaxCanvasPx);
}

void SvgCanvas::open_element(std::string_view tag, std::string_view css_class) {
  body_ += '<';
  body_ += tag;
  if (!css_class.empty()) body_ += " class=\"" + escape_html(css_class) + "\"";
}

void SvgCanvas::append_paint(const Paint& paint) {
  body_ += " fill=\"" + escape_html(paint.fill) + "\"";
  if (paint.stroke == "none") return;
  require_length("stroke_width_px", paint.stroke_width_px);
  body_ += " stroke=\"" + escape_html(paint.stroke) + "\" stroke-width=\"" + svg_number(paint.stroke_width_px) + "\"";
  if (!paint.dash.empty()) body_ += " stroke-dasharray=\"" + escape_html(paint.dash) + "\"";
}

void SvgCanvas::append_points(const std::vector<PointPx>& points, std::string_view field) {
  if (points.empty()) throw Error(std::string(field), "no points", "at least one point");
  body_ += " points=\"";
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (i > 0) body_ += ' ';
    body_ += svg_number(points[i].x_px, field) + "," + svg_number(points[i].y_px, field);
  }
  body_ += '"';
}

void SvgCanvas::rect(double x_px, double y_px, double width_px, double height_px, std::string_view css_class,
                     const Paint& paint) {
  require_length("rect.width_px", width_px);
  require_length("rect.height_px", height_px);
  open_element("rect", css_class);
  body_ += " x=\"" + svg_number(x_px, "rect.x_px") + "\" y=\"" + svg_number(y_px, "rect.y_px") + "\" width=\"" +
           svg_number(width_px) + "\" height=\"" + svg_number(height_px) + "\"";
  append_paint(paint);
  body_ += "/>";
}

void SvgCanvas::line(PointPx from, PointPx to, std::string_view css_class, const Paint& paint) {
  open_element("line", css_class);
  body_ += " x1=\"" + svg_number(from.x_px, "line.x_px") + "\" y1=\"" + svg_number(from.y_px, "line.y_px") +
           "\" x2=\"" + svg_number(to.x_px, "line.x_px") + "\" y2=\"" + svg_number(to.y_px, "line.y_px") + "\"";
  append_paint(paint);
  body_ += "/>";
}

void SvgCanvas::polyline(const std::vector<PointPx>& points, std::string_view css_class, const Paint& paint) {
  open_element("polyline", css_class);
  append_points(points, "polyline.points");
  append_paint(paint);
  body_ += "/>";
}

void SvgCanvas::polygon(const std::vector<PointPx>& points, std::string_view css_class, const Paint& paint) {
  open_element("polygon", css_class);
  append_points(points, "polygon.points");
  append_paint(paint);
  body_ += "/>";
}

void SvgCanvas::circle(PointPx centre, double radius_px, std::string_view css_class, const Paint& paint) {
  require_length("circle.radius_px", radius_px);
  open_element("circle", css_class);
  body_ += " cx=\"" + svg_number(centre.x_px, "circle.x_px") + "\" cy=\"" + svg_number(centre.y_px, "circle.y_px") +
           "\" r=\"" + svg_number(radius_px) + "\"";
  append_paint(paint);
  body_ += "/>";
}

void SvgCanvas::marker(MarkerShape shape, PointPx centre, double radius_px, std::string_view css_class,
                       const Paint& paint) {
  require_length("marker.radius_px", radius_px);
  const double x = centre.x_px, y = centre.y_px, r = radius_px;
  switch (shape) {
    case MarkerShape::circle:
      circle(centre, r, css_class, paint);
      return;
    case MarkerShape::square: {
      const double half = r / std::sqrt(2.0) * 1.2;  // a little larger: same visual weight as the circle
      rect(x - half, y - half, 2 * half, 2 * half, css_class, paint);
      return;
    }
    case MarkerShape::triangle:
      polygon({{x, y - r}, {x + r * kSqrt3 / 2, y + r / 2}, {x - r * kSqrt3 / 2, y + r / 2}}, css_class, paint);
      return;
    case MarkerShape::diamond:
      polygon({{x, y - r}, {x + r, y}, {x, y + r}, {x - r, y}}, css_class, paint);
      return;
    case MarkerShape::cross: {
      const double arm = r / 3;  // a plus sign of arm width 2r/3
      polygon({{x - arm, y - r},
               {x + arm, y - r},
               {x + arm, y - arm},
               {x + r, y - arm},
               {x + r, y + arm},
               {x + arm, y + arm},
               {x + arm, y + r},
               {x - arm, y + r},
               {x - arm, y + arm},
               {x - r, y + arm},
               {x - r, y - arm},
               {x - arm, y - arm}},
              css_class, paint);
      return;
    }
  }
}

void SvgCanvas::text(PointPx at, std::string_view content, TextAnchor anchor, std::string_view css_class,
                     double font_size_px) {
  require_positive_real("text.font_size_px", font_size_px, kMaxCanvasPx);
  open_element("text", css_class);
  body_ += " x=\"" + svg_number(at.x_px, "text.x_px") + "\" y=\"" + svg_number(at.y_px, "text.y_px") +
           "\" font-size=\"" + svg_number(font_size_px) + "\"";
  if (anchor != TextAnchor::start) body_ += " text-anchor=\"" + std::string(anchor_name(anchor)) + "\"";
  body_ += ">" + escape_html(content) + "</text>";
}

void SvgCanvas::begin_group(std::string_view css_class, std::string_view title) {
  open_element("g", css_class);
  body_ += '>';
  if (!title.empty()) body_ += "<title>" + escape_html(title) + "</title>";
  ++open_groups_;
}

void SvgCanvas::end_group() {
  if (open_groups_ == 0) throw Error("group", "end_group without begin_group", "one end_group per begin_group");
  --open_groups_;
  body_ += "</g>";
}

std::string SvgCanvas::to_string() const {
  if (open_groups_ != 0)
    throw Error("group", std::to_string(open_groups_) + " group(s) still open", "one end_group per begin_group");
  const std::string w = svg_number(width_px_), h = svg_number(height_px_);
  return "<svg class=\"chart\" width=\"" + w + "\" height=\"" + h + "\" viewBox=\"0 0 " + w + " " + h +
         "\" role=\"img\" aria-label=\"" + escape_html(aria_label_) + "\">" + body_ + "</svg>";
}

}  // namespace tessera::report
