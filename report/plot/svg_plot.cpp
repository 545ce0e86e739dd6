#include "report/plot/svg_plot.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "common/error.hpp"
#include "common/units.hpp"
#include "report/format/record_text.hpp"
#include "report/plot/plot_axis.hpp"
#include "report/xml.hpp"

namespace cb {

namespace {

// Layout, in SVG user units (pixels).
constexpr double kPanelW = 520, kPanelH = 340;
constexpr double kPadLeft = 72, kPadRight = 18, kPadTop = 30, kPadBottom = 48;
constexpr double kMargin = 20, kTitleH = 56, kGap = 16;
constexpr double kCharW = 6.6;  // average width of a 12 px sans-serif character
constexpr const char* kFont = "DejaVu Sans, Helvetica, Arial, sans-serif";

// Tableau 10: distinguishable, colour-blind-aware; past ten, colours repeat dashed.
constexpr std::array<const char*, 10> kColours = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2",
                                                  "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
                                                  "#9c755f", "#bab0ac"};
constexpr std::array<const char*, 3> kDashes = {"", "6 3", "2 2"};

using SeriesKey = std::tuple<std::size_t, std::string, std::string, std::string, std::string,
                             std::string, int, int>;  // file, backend, algo, dtype, op, place,
                                                      // root, nranks

struct Point {
  double x, y;
};

struct Series {
  SeriesKey key;
  std::string label;
  std::map<std::string, std::vector<Point>> points;  // by collective
};

const char* metric_title(PlotMetric m) {
  switch (m) {
    case PlotMetric::Busbw:
      return "bus bandwidth (GB/s)";
    case PlotMetric::Algbw:
      return "algorithm bandwidth (GB/s)";
    case PlotMetric::Time:
      return "time per operation";
  }
  return "";
}

std::optional<double> metric_value(const ResultRecord& r, PlotMetric m) {
  switch (m) {
    case PlotMetric::Busbw:
      return r.busbw_GBps;
    case PlotMetric::Algbw:
      return r.algbw_GBps;
    case PlotMetric::Time:
      return r.time_us;
  }
  return std::nullopt;
}

std::string value_text(double v, PlotMetric m) {
  return m == PlotMetric::Time ? format_time_us(v) : fmt::format("{:.3g} GB/s", v);
}

// Labels name what differs between series: backend/algorithm always, the rest only if it varies.
void label_series(std::vector<Series>& series, const std::vector<ResultFile>& files) {
  auto varies = [&](auto get) {
    std::set<decltype(get(series.front().key))> seen;
    for (const auto& s : series) seen.insert(get(s.key));
    return seen.size() > 1;
  };
  bool file = varies([](const SeriesKey& k) { return std::get<0>(k); });
  bool dtype = varies([](const SeriesKey& k) { return std::get<3>(k); });
  bool op = varies([](const SeriesKey& k) { return std::get<4>(k); });
  bool place = varies([](const SeriesKey& k) { return std::get<5>(k); });
  bool root = varies([](const SeriesKey& k) { return std::get<6>(k); });
  bool ranks = varies([](const SeriesKey& k) { return std::get<7>(k); });
  for (auto& s : series) {
    const auto& [fi, backend, algo, dt, o, pl, rt, n] = s.key;
    std::string label = backend + "/" + algo;
    if (dtype) label += " " + dt;
    if (op) label += " " + o;
    if (place) label += pl == "in" ? " in-place" : pl == "out" ? " out-of-place" : " " + pl;
    if (root) label += rt >= 0 ? fmt::format(" root {}", rt) : std::string(" no root");
    if (ranks) label += fmt::format(" {} ranks", n);
    if (file) label += " · " + file_label(files[fi].path);
    s.label = label;
  }
}

std::string default_title(const std::vector<ResultFile>& files, PlotMetric metric) {
  const RunMeta* meta = nullptr;
  for (const auto& f : files) {
    if (f.meta) {
      meta = &*f.meta;
      break;
    }
  }
  std::string title = fmt::format("commbench {}", metric_title(metric));
  if (!meta) return title;
  std::string libs;
  for (const auto& [backend, lib] : meta->libraries) libs += (libs.empty() ? "" : ", ") + lib;
  std::string hosts;
  for (const auto& h : meta->hosts) hosts += (hosts.empty() ? "" : ",") + h;
  return fmt::format("{} · {} ranks on {} node{}{}{}", title, meta->nranks, meta->nnodes,
                     meta->nnodes == 1 ? "" : "s", hosts.empty() ? "" : " (" + hosts + ")",
                     libs.empty() ? "" : " · " + libs);
}

std::string subtitle(const std::vector<ResultFile>& files) {
  std::string s;
  for (const auto& f : files) {
    std::string one = file_label(f.path);
    if (f.meta && !f.meta->start_time.empty()) {
      one += fmt::format(" ({}, commbench {})", f.meta->start_time, f.meta->version);
    }
    s += (s.empty() ? "" : " · ") + one;
  }
  return s;
}

class Svg {
 public:
  Svg(double w, double h) : w_(w), h_(h) {}
  void rect(double x, double y, double w, double h, const std::string& style) {
    body_ +=
        fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" {}/>\n", x,
                    y, w, h, style);
  }
  void line(double x1, double y1, double x2, double y2, const std::string& style) {
    body_ += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" {}/>\n", x1,
                         y1, x2, y2, style);
  }
  void text(double x, double y, std::string_view s, const std::string& style) {
    body_ +=
        fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" {}>{}</text>\n", x, y, style, xml_escape(s));
  }
  void raw(const std::string& s) { body_ += s; }
  std::string finish() const {
    return fmt::format(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0:.0f}\" height=\"{1:.0f}\" "
        "viewBox=\"0 0 {0:.0f} {1:.0f}\" font-family=\"{2}\" font-size=\"12\">\n"
        "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n{3}</svg>\n",
        w_, h_, kFont, body_);
  }

 private:
  double w_, h_;
  std::string body_;
};

std::string series_style(std::size_t i) {
  std::string dash = kDashes[(i / kColours.size()) % kDashes.size()];
  return fmt::format("stroke=\"{}\"{}", kColours[i % kColours.size()],
                     dash.empty() ? "" : fmt::format(" stroke-dasharray=\"{}\"", dash));
}

void draw_panel(Svg& svg, double x0, double y0, const std::string& collective,
                const std::vector<Series>& series, PlotMetric metric) {
  double min_x = 0, max_x = 0, min_y = 0, max_y = 0;
  bool any = false;
  for (const auto& s : series) {
    auto it = s.points.find(collective);
    if (it == s.points.end()) continue;
    for (const auto& p : it->second) {
      if (!any) {
        min_x = max_x = p.x;
        min_y = max_y = p.y;
        any = true;
      }
      min_x = std::min(min_x, p.x);
      max_x = std::max(max_x, p.x);
      min_y = std::min(min_y, p.y);
      max_y = std::max(max_y, p.y);
    }
  }
  Axis xa = size_axis(min_x, max_x);
  Axis ya = metric == PlotMetric::Time ? time_axis(min_y, max_y) : linear_axis(max_y);
  double left = x0 + kPadLeft, right = x0 + kPanelW - kPadRight;
  double top = y0 + kPadTop, bottom = y0 + kPanelH - kPadBottom;
  auto px = [&](double v) { return left + xa.fraction(v) * (right - left); };
  auto py = [&](double v) { return bottom - ya.fraction(v) * (bottom - top); };

  svg.text(x0 + kPanelW / 2, y0 + 18, collective,
           "text-anchor=\"middle\" font-size=\"14\" font-weight=\"bold\" fill=\"#222\"");
  svg.rect(left, top, right - left, bottom - top, "fill=\"#fafafa\" stroke=\"#999\"");
  for (const auto& t : ya.ticks) {
    double y = py(t.value);
    if (y < top - 0.5 || y > bottom + 0.5) continue;
    svg.line(left, y, right, y, "stroke=\"#e3e3e3\"");
    svg.text(left - 6, y + 4, t.label, "text-anchor=\"end\" fill=\"#444\"");
  }
  for (double e = std::ceil(std::log2(xa.lo)); std::exp2(e) <= xa.hi; ++e) {
    svg.line(px(std::exp2(e)), bottom, px(std::exp2(e)), bottom + 3, "stroke=\"#bbb\"");
  }
  for (const auto& t : xa.ticks) {
    double x = px(t.value);
    svg.line(x, top, x, bottom, "stroke=\"#e3e3e3\"");
    svg.line(x, bottom, x, bottom + 4, "stroke=\"#999\"");
    svg.text(x, bottom + 17, t.label, "text-anchor=\"middle\" fill=\"#444\"");
  }
  svg.text((left + right) / 2, bottom + 38, "message size (bytes, log scale)",
           "text-anchor=\"middle\" fill=\"#444\"");
  std::string y_title =
      metric == PlotMetric::Time ? "time per operation (log scale)" : metric_title(metric);
  svg.raw(
      fmt::format("<text transform=\"translate({:.1f},{:.1f}) rotate(-90)\" "
                  "text-anchor=\"middle\" fill=\"#444\">{}</text>\n",
                  x0 + 16, (top + bottom) / 2, xml_escape(y_title)));

  for (std::size_t i = 0; i < series.size(); ++i) {
    auto it = series[i].points.find(collective);
    if (it == series[i].points.end()) continue;
    std::string path;
    for (const auto& p : it->second) path += fmt::format("{:.1f},{:.1f} ", px(p.x), py(p.y));
    svg.raw(fmt::format("<polyline points=\"{}\" fill=\"none\" stroke-width=\"2\" {}/>\n", path,
                        series_style(i)));
    for (const auto& p : it->second) {
      svg.raw(fmt::format(
          "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\"><title>{}</title></circle>\n",
          px(p.x), py(p.y), kColours[i % kColours.size()],
          xml_escape(fmt::format("{} {} {}: {}", collective, series[i].label,
                                 format_size(static_cast<std::uint64_t>(p.x)),
                                 value_text(p.y, metric)))));
    }
  }
}

// Whether op or root distinguish records within one collective; otherwise they only follow from
// the collective (allreduce has an op, broadcast a root) and must not split series across panels.
std::pair<bool, bool> op_root_vary(const std::vector<ResultFile>& files) {
  std::map<std::string, std::set<std::string>> ops;
  std::map<std::string, std::set<int>> roots;
  for (const auto& f : files) {
    for (const auto& r : f.records) {
      ops[r.collective].insert(r.op);
      roots[r.collective].insert(r.root);
    }
  }
  bool op = false, root = false;
  for (const auto& [c, s] : ops) op = op || s.size() > 1;
  for (const auto& [c, s] : roots) root = root || s.size() > 1;
  return {op, root};
}

}  // namespace

Plot render_plot(const std::vector<ResultFile>& files, const PlotOptions& options) {
  Plot plot;
  auto [op_varies, root_varies] = op_root_vary(files);
  std::vector<std::string> collectives;  // in order of first appearance
  std::map<SeriesKey, std::size_t> index;
  std::vector<Series> series;
  std::set<std::string> seen_collectives;
  std::size_t skipped_barrier = 0, skipped_value = 0;
  for (std::size_t fi = 0; fi < files.size(); ++fi) {
    for (const auto& r : files[fi].records) {
      seen_collectives.insert(r.collective);
      if (options.collective && r.collective != *options.collective) continue;
      if (r.collective == "barrier" || r.bytes == 0) {
        ++skipped_barrier;
        continue;
      }
      std::optional<double> v = metric_value(r, options.metric);
      if (!v || *v <= 0) {
        ++skipped_value;
        continue;
      }
      SeriesKey key{fi,
                    r.backend,
                    series_algorithm(r),
                    r.dtype,
                    op_varies ? r.op : "",
                    r.placement,
                    root_varies ? r.root : -1,
                    r.nranks};
      auto [it, fresh] = index.emplace(key, series.size());
      if (fresh) series.push_back({key, "", {}});
      // A panel per collective, and per split for alltoallv.
      const std::string panel = collective_label(r);
      series[it->second].points[panel].push_back({static_cast<double>(r.bytes), *v});
      if (std::find(collectives.begin(), collectives.end(), panel) == collectives.end()) {
        collectives.push_back(panel);
      }
    }
  }
  if (options.collective && !seen_collectives.count(*options.collective)) {
    std::string found;
    for (const auto& c : seen_collectives) found += (found.empty() ? "" : ", ") + c;
    usage_error("no results for --collective '{}' in the input: found {}", *options.collective,
                found.empty() ? "nothing" : found);
  }
  if (skipped_barrier) {
    plot.notes.push_back(
        fmt::format("{} barrier record{} not plotted: a barrier has no message size",
                    skipped_barrier, skipped_barrier == 1 ? "" : "s"));
  }
  if (skipped_value) {
    plot.notes.push_back(fmt::format("{} record{} without a positive {} not plotted", skipped_value,
                                     skipped_value == 1 ? "" : "s", metric_title(options.metric)));
  }
  if (series.empty()) usage_error("nothing to plot: no record with a message size and a value");
  for (auto& s : series) {
    for (auto& [c, pts] : s.points) {
      std::sort(pts.begin(), pts.end(), [](const Point& a, const Point& b) { return a.x < b.x; });
    }
  }
  label_series(series, files);

  int n = static_cast<int>(collectives.size());
  int cols = n == 1 ? 1 : (n <= 4 ? 2 : 3);
  int rows = (n + cols - 1) / cols;
  std::string title = options.title.empty() ? default_title(files, options.metric) : options.title;
  std::string sub = subtitle(files);
  // Wide enough for the title (16 px bold) and subtitle; panels stay left-aligned.
  double width = std::max({kMargin * 2 + cols * kPanelW + (cols - 1) * kGap,
                           kMargin * 2 + 9.2 * static_cast<double>(title.size()),
                           kMargin * 2 + kCharW * static_cast<double>(sub.size())});
  std::size_t longest = 0;
  for (const auto& s : series) longest = std::max(longest, s.label.size());
  double item_w = 34 + kCharW * static_cast<double>(longest) + 16;
  int per_row = std::max(1, static_cast<int>((width - 2 * kMargin) / item_w));
  int legend_rows = (static_cast<int>(series.size()) + per_row - 1) / per_row;
  double panels_h = rows * kPanelH + (rows - 1) * kGap;
  double height = kTitleH + panels_h + 16 + legend_rows * 20 + kMargin;

  Svg svg(width, height);
  svg.text(kMargin, 26, title, "font-size=\"16\" font-weight=\"bold\" fill=\"#222\"");
  svg.text(kMargin, 44, sub, "fill=\"#666\"");
  for (int i = 0; i < n; ++i) {
    double x0 = kMargin + (i % cols) * (kPanelW + kGap);
    double y0 = kTitleH + (i / cols) * (kPanelH + kGap);
    draw_panel(svg, x0, y0, collectives[i], series, options.metric);
  }
  double ly = kTitleH + panels_h + 20;
  for (std::size_t i = 0; i < series.size(); ++i) {
    double x = kMargin + (static_cast<int>(i) % per_row) * item_w;
    double y = ly + (static_cast<int>(i) / per_row) * 20;
    svg.line(x, y, x + 24, y, "stroke-width=\"3\" " + series_style(i));
    svg.raw(fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\"/>\n", x + 12, y,
                        kColours[i % kColours.size()]));
    svg.text(x + 32, y + 4, series[i].label, "fill=\"#222\"");
  }
  plot.svg = svg.finish();
  return plot;
}

}  // namespace cb
