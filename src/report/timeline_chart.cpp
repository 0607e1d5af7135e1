#include "report/timeline_chart.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>

#include "core/checks.h"
#include "core/error.h"
#include "report/bar_chart.h"
#include "report/html_text.h"
#include "report/svg_canvas.h"

namespace tessera::report {

namespace {

constexpr double kTimelineMicrosecondsPerSecond = 1e6;
constexpr double kMaxTimeS = 1e6;  // microseconds stay exact in a double (and in JavaScript)
constexpr double kRowPx = 14, kDenseRowPx = 8;
constexpr std::size_t kDenseRows = 40;  // more rows than this: thinner rows
constexpr double kSummaryRowPx = 14;

std::int64_t microseconds(double seconds) { return std::llround(seconds * kTimelineMicrosecondsPerSecond); }

std::uint64_t zigzag(std::int64_t value) {
  return value >= 0 ? static_cast<std::uint64_t>(value) * 2 : static_cast<std::uint64_t>(-(value + 1)) * 2 + 1;
}

void append_varint(std::string& bytes, std::uint64_t value) {
  constexpr std::uint64_t kLow7 = 0x7F, kMore = 0x80;
  while (value > kLow7) {
    bytes += static_cast<char>((value & kLow7) | kMore);
    value >>= 7;
  }
  bytes += static_cast<char>(value);
}

std::string base64(const std::string& bytes) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    const auto byte = [&](std::size_t k) { return k < bytes.size() ? static_cast<unsigned char>(bytes[k]) : 0u; };
    const std::uint32_t triple = (byte(i) << 16) | (byte(i + 1) << 8) | byte(i + 2);
    for (std::size_t k = 0; k < 4; ++k)
      out += (i + k <= bytes.size()) ? kAlphabet[(triple >> (18 - 6 * k)) & 0x3F] : '=';
  }
  return out;
}

std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\')
      out += std::string("\\") + c;
    else if (static_cast<unsigned char>(c) < 0x20) {
      char buffer[8];
      std::snprintf(buffer, sizeof buffer, "\\u%04x", static_cast<unsigned>(c));
      out += buffer;
    } else
      out += c;
  }
  return out + "\"";
}

void validate_timeline_chart(const TimelineChart& chart) {
  if (chart.rows.empty()) throw Error("rows", "no rows", "at least one row");
  for (std::size_t i = 0; i < chart.rows.size(); ++i)
    for (std::size_t j = 0; j < chart.rows[i].ops.size(); ++j) {
      const TimelineOp& op = chart.rows[i].ops[j];
      const std::string item = "rows[" + std::to_string(i) + "].ops[" + std::to_string(j) + "]";
      require_non_negative_real(item + ".start_s", op.start_s, kMaxTimeS);
      require_non_negative_real(item + ".duration_s", op.duration_s, kMaxTimeS);
      if (op.micro_batch < -1)
        throw Error(item + ".micro_batch", "got " + std::to_string(op.micro_batch), "-1 or more");
    }
}

// The kinds that occur, in enum order: they take the palette's first colours, in the canvas and
// in the summary alike.
std::vector<OpKind> kinds_present(const TimelineChart& chart) {
  std::array<bool, kOpKindCount> seen{};
  for (const TimelineRow& row : chart.rows)
    for (const TimelineOp& op : row.ops) seen[static_cast<std::size_t>(op.kind)] = true;
  std::vector<OpKind> kinds;
  for (int k = 0; k < kOpKindCount; ++k)
    if (seen[static_cast<std::size_t>(k)]) kinds.push_back(static_cast<OpKind>(k));
  return kinds;
}

// Per row: the share of the makespan each kind takes (overlapping ops can sum past 100%).
std::string summary_svg(const TimelineChart& chart, const std::vector<OpKind>& kinds) {
  double makespan_s = 0;
  for (const TimelineRow& row : chart.rows)
    for (const TimelineOp& op : row.ops) makespan_s = std::max(makespan_s, op.start_s + op.duration_s);
  StackedBarChart bars{chart.title + ": busy share of each row", "%", {}, std::nullopt, "", 720, kSummaryRowPx, 3};
  for (const TimelineRow& row : chart.rows) {
    std::array<double, kOpKindCount> busy_s{};
    for (const TimelineOp& op : row.ops) busy_s[static_cast<std::size_t>(op.kind)] += op.duration_s;
    BarRow bar{row.label, {}};
    for (const OpKind kind : kinds)
      bar.segments.push_back(
          {op_kind_name(kind), makespan_s > 0 ? 100 * busy_s[static_cast<std::size_t>(kind)] / makespan_s : 0});
    if (bar.segments.empty()) bar.segments.push_back({"idle", 0});  // a row of no ops still gets its line
    bars.rows.push_back(bar);
  }
  return stacked_bar_chart_svg(bars);
}

// Decodes data-ops (format in the header), draws the visible window, and handles zoom / pan /
// hover. Kept in one place so C++ encoder and JS decoder are read together.
constexpr const char* kScript = R"JS(<script>(function(){
var root=document.currentScript.previousElementSibling,cv=root.querySelector('canvas'),ctx=cv.getContext('2d');
var labels=JSON.parse(root.dataset.labels),counts=root.dataset.counts.split(',').map(Number);
var colours=root.dataset.colours.split(','),names=root.dataset.kinds.split(','),rowPx=Number(root.dataset.rowPx);
var bin=atob(root.dataset.ops),pos=0,K=names.length,rows=[],end=1,LEFT=90,TOP=4,AXIS=22;
function next(){var v=0,m=1,b;do{b=bin.charCodeAt(pos++);v+=(b&127)*m;m*=128;}while(b>127);return v;}
function unzig(v){return v%2?-(v+1)/2:v/2;}
for(var r=0;r<counts.length;r++){
  var n=counts[r],o={st:new Float64Array(n),du:new Float64Array(n),kd:new Uint8Array(n),mb:new Int32Array(n)};
  var prevEnd=0,pd=new Array(K).fill(0),pm=new Array(K).fill(0);
  for(var i=0;i<n;i++){var v=next(),k=v%K;o.kd[i]=k;o.st[i]=prevEnd+unzig((v-k)/K);
    pd[k]+=unzig(next());o.du[i]=pd[k];pm[k]+=unzig(next());o.mb[i]=pm[k];
    prevEnd=o.st[i]+o.du[i];if(prevEnd>end)end=prevEnd;}
  rows.push(o);}
var t0=0,t1=end;cv.style.height=(TOP+rows.length*rowPx+AXIS)+'px';
function scale(){return (cv.clientWidth-LEFT)/(t1-t0);}
function draw(){
  var w=cv.clientWidth,h=cv.clientHeight,d=window.devicePixelRatio||1;cv.width=w*d;cv.height=h*d;
  ctx.setTransform(d,0,0,d,0,0);ctx.clearRect(0,0,w,h);ctx.font='11px system-ui,sans-serif';var s=scale();
  for(var r=0;r<rows.length;r++){var o=rows[r],y=TOP+r*rowPx,last=-1;ctx.fillStyle='#000';
    if(rowPx>=10||r%8===0)ctx.fillText(labels[r],2,y+rowPx);
    for(var i=0;i<o.st.length;i++){var x0=LEFT+(o.st[i]-t0)*s,x1=x0+o.du[i]*s;if(x1<LEFT||x0>w)continue;
      if(o.kd[i]!==last){last=o.kd[i];ctx.fillStyle=colours[last];}
      x0=Math.max(x0,LEFT);ctx.fillRect(x0,y+1,Math.max(x1-x0,0.5),rowPx-2);}}
  var raw=(t1-t0)/8,p=Math.pow(10,Math.floor(Math.log10(raw))),q=raw/p,ay=TOP+rows.length*rowPx;
  var step=(q>5?10:q>2?5:q>1?2:1)*p;ctx.fillStyle='#000';
  for(var t=Math.ceil(t0/step)*step;t<=t1;t+=step){var x=LEFT+(t-t0)*s;ctx.fillRect(x,ay,1,4);
    ctx.fillText(String(+(t/1000).toPrecision(6))+' ms',x+2,ay+15);}}
function clamp(){var span=Math.min(Math.max(t1-t0,1),end);if(t0<0)t0=0;t1=t0+span;if(t1>end){t1=end;t0=end-span;}}
cv.addEventListener('wheel',function(e){e.preventDefault();
  var s=scale(),tm=t0+(e.offsetX-LEFT)/s,f=Math.exp(e.deltaY*0.002);
  t0=tm-(tm-t0)*f;t1=tm+(t1-tm)*f;clamp();draw();},{passive:false});
var drag=null;cv.addEventListener('mousedown',function(e){drag={x:e.clientX,t0:t0,t1:t1};});
window.addEventListener('mouseup',function(){drag=null;});
cv.addEventListener('dblclick',function(){t0=0;t1=end;draw();});
cv.addEventListener('mousemove',function(e){var s=scale();
  if(drag){var dt=(e.clientX-drag.x)/s;t0=drag.t0-dt;t1=drag.t1-dt;clamp();draw();return;}
  var r=Math.floor((e.offsetY-TOP)/rowPx),t=t0+(e.offsetX-LEFT)/s,tip='';
  if(r>=0&&r<rows.length){var o=rows[r];for(var i=0;i<o.st.length;i++)if(o.st[i]<=t&&t<o.st[i]+o.du[i]){
    tip=labels[r]+': '+names[o.kd[i]]+(o.mb[i]>=0?' mb '+o.mb[i]:'')+
      ', start '+(o.st[i]/1000)+' ms, '+(o.du[i]/1000)+' ms';break;}}
  cv.title=tip;});
window.addEventListener('resize',draw);draw();})();</script>)JS";

}  // namespace

const char* op_kind_name(OpKind kind) {
  switch (kind) {
    case OpKind::forward:
      return "forward";
    case OpKind::backward:
      return "backward";
    case OpKind::weight_grad:
      return "weight-grad";
    case OpKind::p2p:
      return "p2p";
    case OpKind::dp_sync:
      return "dp-sync";
    case OpKind::other:
      return "other";
  }
  return "other";
}

namespace {

std::string encode_bytes(std::span<const TimelineOp> ops) {
  std::vector<TimelineOp> sorted(ops.begin(), ops.end());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const TimelineOp& a, const TimelineOp& b) { return a.start_s < b.start_s; });
  std::string bytes;
  std::int64_t previous_end_us = 0;
  std::array<std::int64_t, kOpKindCount> previous_duration_us{}, previous_micro_batch{};
  for (const TimelineOp& op : sorted) {
    const auto kind = static_cast<std::size_t>(op.kind);
    const std::int64_t start_us = microseconds(op.start_s), duration_us = microseconds(op.duration_s);
    append_varint(bytes, zigzag(start_us - previous_end_us) * kOpKindCount + kind);
    append_varint(bytes, zigzag(duration_us - previous_duration_us[kind]));
    append_varint(bytes, zigzag(op.micro_batch - previous_micro_batch[kind]));
    previous_end_us = start_us + duration_us;
    previous_duration_us[kind] = duration_us;
    previous_micro_batch[kind] = op.micro_batch;
  }
  return bytes;
}

}  // namespace

std::string encode_timeline_ops(std::span<const TimelineOp> ops) { return base64(encode_bytes(ops)); }

std::string timeline_chart_html(const TimelineChart& chart) {
  validate_timeline_chart(chart);
  std::string labels = "[", counts, colours, kinds, legend;
  for (std::size_t i = 0; i < chart.rows.size(); ++i) {
    const std::string separator = i > 0 ? "," : "";
    labels += separator + json_string(chart.rows[i].label);
    counts += separator + std::to_string(chart.rows[i].ops.size());
  }
  labels += "]";
  // One base64 text for all rows: the rows' bytes back to back (the decoder reads them in order).
  std::string bytes;
  for (const TimelineRow& row : chart.rows) bytes += encode_bytes(row.ops);
  const std::string ops = base64(bytes);
  const std::vector<OpKind> present = kinds_present(chart);
  std::array<std::size_t, kOpKindCount> colour_of{};  // absent kinds keep colour 0: never drawn
  for (std::size_t c = 0; c < present.size(); ++c) {
    colour_of[static_cast<std::size_t>(present[c])] = c;
    legend += "<span class=\"swatch\" style=\"background:" + palette_colour(c) + "\"></span>" +
              op_kind_name(present[c]) + " ";
  }
  for (int k = 0; k < kOpKindCount; ++k) {
    const std::string separator = k > 0 ? "," : "";
    colours += separator + palette_colour(colour_of[static_cast<std::size_t>(k)]);
    kinds += separator + op_kind_name(static_cast<OpKind>(k));
  }
  const double row_px = chart.rows.size() > kDenseRows ? kDenseRowPx : kRowPx;
  return "<figure class=\"timeline-figure\"><figcaption>" + escape_html(chart.title) +
         "</figcaption><div class=\"timeline\" data-labels=\"" + escape_html(labels) + "\" data-counts=\"" + counts +
         "\" data-colours=\"" + colours + "\" data-kinds=\"" + kinds + "\" data-row-px=\"" + svg_number(row_px) +
         "\" data-ops=\"" + ops + "\"><div class=\"timeline-legend\">" + legend + "</div><canvas aria-label=\"" +
         escape_html(chart.title) + "\"></canvas></div>" + kScript +
         "<noscript><p>The interactive timeline needs JavaScript; the summary below gives each row's busy share."
         "</p></noscript><div class=\"timeline-summary\">" +
         summary_svg(chart, present) + "</div></figure>";
}

}  // namespace tessera::report
