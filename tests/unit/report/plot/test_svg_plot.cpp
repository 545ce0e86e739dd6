#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "common/error.hpp"
#include "report/plot/plot_axis.hpp"
#include "report/plot/svg_plot.hpp"
#include "report_fixtures.hpp"

namespace cb {
namespace {

using test::mpi_allreduce_record;
using test::result_fixture;

std::vector<std::string> labels(const Axis& a) {
  std::vector<std::string> out;
  for (const auto& t : a.ticks) out.push_back(t.label);
  return out;
}

std::size_t count(const std::string& s, const std::string& needle) {
  std::size_t n = 0;
  for (auto p = s.find(needle); p != std::string::npos; p = s.find(needle, p + 1)) ++n;
  return n;
}

TEST(PlotAxis, SizeAxisUsesHumanPowerOfTwoLabels) {
  Axis a = size_axis(8, 64 << 20);
  EXPECT_TRUE(a.log);
  std::vector<std::string> l = labels(a);
  EXPECT_LE(l.size(), 8u);
  EXPECT_NE(std::find(l.begin(), l.end(), "1 KiB"), l.end());
  EXPECT_NE(std::find(l.begin(), l.end(), "1 MiB"), l.end());
  EXPECT_LT(a.fraction(8), a.fraction(1024));
  EXPECT_GT(a.fraction(8), 0.0);
  EXPECT_LT(a.fraction(64 << 20), 1.0);
  EXPECT_EQ(labels(size_axis(1024, 1024)), (std::vector<std::string>{"512 B", "1 KiB", "2 KiB"}));
}

TEST(PlotAxis, LinearAxisStartsAtZeroWithRoundSteps) {
  Axis a = linear_axis(4.52);
  EXPECT_EQ(a.lo, 0);
  EXPECT_GE(a.hi, 4.52);
  EXPECT_EQ(labels(a), (std::vector<std::string>{"0", "1", "2", "3", "4", "5"}));
  EXPECT_EQ(labels(linear_axis(460)).back(), "500");
}

TEST(PlotAxis, TimeAxisSpansWholeDecades) {
  Axis a = time_axis(0.3, 3000);
  EXPECT_EQ(a.lo, 0.1);
  EXPECT_EQ(a.hi, 10000);
  EXPECT_EQ(labels(a).front(), "0.1 us");
  EXPECT_EQ(labels(a).back(), "10 ms");
  EXPECT_NEAR(a.fraction(10), 0.4, 1e-9);
  // A narrow range gains 2x and 5x ticks.
  EXPECT_EQ(labels(time_axis(2, 8)), (std::vector<std::string>{"1 us", "2 us", "5 us", "10 us"}));
}

TEST(SvgPlot, OnePanelPerCollectiveAndOneLinePerSeries) {
  ResultFile f = read_result_file(result_fixture("base.json"));
  Plot p = render_plot({f}, {});
  EXPECT_EQ(p.svg.rfind("<?xml", 0), 0u);
  EXPECT_NE(p.svg.find("<svg xmlns=\"http://www.w3.org/2000/svg\""), std::string::npos);
  EXPECT_NE(p.svg.find(">allreduce</text>"), std::string::npos);
  EXPECT_NE(p.svg.find(">broadcast</text>"), std::string::npos);
  EXPECT_EQ(p.svg.find(">barrier</text>"), std::string::npos);
  EXPECT_EQ(count(p.svg, "<polyline"), 2u);          // mpi/default in two panels
  EXPECT_EQ(count(p.svg, "<circle"), 5u + 1u + 1u);  // points + one legend marker
  EXPECT_NE(p.svg.find("bus bandwidth (GB/s)"), std::string::npos);
  EXPECT_NE(p.svg.find("2 ranks on 1 node (ci-node-a)"), std::string::npos);
  ASSERT_EQ(p.notes.size(), 1u);
  EXPECT_NE(p.notes[0].find("barrier"), std::string::npos);
}

TEST(SvgPlot, SeriesFromSeveralFilesAreLabelledByFile) {
  std::vector<ResultFile> files = {read_result_file(result_fixture("base.json")),
                                   read_result_file(result_fixture("new-regressed.json"))};
  PlotOptions o;
  o.collective = "allreduce";
  Plot p = render_plot(files, o);
  EXPECT_EQ(count(p.svg, "<polyline"), 2u);
  EXPECT_NE(p.svg.find(">mpi/default · base</text>"), std::string::npos);
  EXPECT_NE(p.svg.find(">mpi/default · new-regressed</text>"), std::string::npos);
  EXPECT_EQ(p.svg.find(">broadcast</text>"), std::string::npos);
}

TEST(SvgPlot, TimeMetricUsesALogAxisAndTitlesAreEscaped) {
  PlotOptions o;
  o.metric = PlotMetric::Time;
  o.title = "R&D <nightly>";
  Plot p = render_plot({read_result_file(result_fixture("base.json"))}, o);
  EXPECT_NE(p.svg.find("time per operation (log scale)"), std::string::npos);
  EXPECT_NE(p.svg.find("R&amp;D &lt;nightly&gt;"), std::string::npos);
  EXPECT_NE(p.svg.find(">1 ms</text>"), std::string::npos);
}

// Tick labels as drawn: label -> (x, y) of its text.
std::map<std::string, std::pair<double, double>> tick_texts(const std::string& svg) {
  std::map<std::string, std::pair<double, double>> out;
  std::regex text(R"re(<text x="([-0-9.]+)" y="([-0-9.]+)" [^>]*fill="#444">([^<]*)</text>)re");
  for (std::sregex_iterator it(svg.begin(), svg.end(), text), end; it != end; ++it) {
    out[(*it)[3]] = {std::stod((*it)[1]), std::stod((*it)[2])};
  }
  return out;
}

double size_of_label(const std::string& label) {
  static const std::map<std::string, double> units = {
      {"B", 1}, {"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0}};
  auto space = label.find(' ');
  if (space == std::string::npos || !units.contains(label.substr(space + 1))) return -1;
  return std::stod(label.substr(0, space)) * units.at(label.substr(space + 1));
}

// Every point sits where the axes say it is: its x where the size axis puts its message size (a
// log2 scale through the labelled ticks), its y where the value axis puts its bandwidth (linear
// through the labelled ticks).
TEST(SvgPlot, PointsLandWhereTheAxesPutTheirSizeAndValue) {
  ResultFile f;
  f.path = "points.json";
  f.format = "json";
  const std::map<std::uint64_t, double> busbw = {{1024, 1.0}, {1 << 20, 4.0}, {1 << 30, 2.0}};
  for (const auto& [bytes, bw] : busbw) {
    ResultRecord r = mpi_allreduce_record(bytes);
    r.iters = 10;
    r.time_us = r.min_us = r.p50_us = r.p99_us = r.max_us = static_cast<double>(bytes) / bw / 1e3;
    r.algbw_GBps = bw;
    r.busbw_GBps = bw;
    r.wrong = 0;
    f.records.push_back(r);
  }
  std::string svg = render_plot({f}, {}).svg;

  // Axes from the tick labels: x = a + b log2(bytes), y = c + d value.
  std::vector<std::pair<double, double>> xs, ys;  // (log2 size or value, coordinate)
  for (const auto& [label, at] : tick_texts(svg)) {
    if (double size = size_of_label(label); size > 0) {
      xs.push_back({std::log2(size), at.first});
    } else if (std::regex_match(label, std::regex("[0-9.]+"))) {
      ys.push_back({std::stod(label), at.second - 4});  // the label sits 4 px below its line
    }
  }
  ASSERT_GE(xs.size(), 2u) << svg;
  ASSERT_GE(ys.size(), 2u) << svg;
  auto fit = [](const std::vector<std::pair<double, double>>& v) {
    double slope = (v.back().second - v.front().second) / (v.back().first - v.front().first);
    return std::make_pair(v.front().second - slope * v.front().first, slope);
  };
  std::sort(xs.begin(), xs.end());
  std::sort(ys.begin(), ys.end());
  auto [xa, xb] = fit(xs);
  auto [ya, yb] = fit(ys);
  EXPECT_GT(xb, 0);  // larger sizes to the right
  EXPECT_LT(yb, 0);  // larger values up
  for (const auto& [l, x] : xs) EXPECT_NEAR(x, xa + xb * l, 0.15);
  for (const auto& [v, y] : ys) EXPECT_NEAR(y, ya + yb * v, 0.15);

  std::regex circle(
      R"re(<circle cx="([-0-9.]+)" cy="([-0-9.]+)" r="3" fill="[^"]*"><title>([^<]*)</title>)re");
  std::size_t points = 0;
  for (std::sregex_iterator it(svg.begin(), svg.end(), circle), end; it != end; ++it, ++points) {
    std::string title = (*it)[3];
    auto at = title.find(" mpi/default ");
    ASSERT_NE(at, std::string::npos) << title;
    std::string size_label = title.substr(at + 13, title.find(':') - at - 13);
    double bytes = size_of_label(size_label);
    ASSERT_TRUE(busbw.contains(static_cast<std::uint64_t>(bytes))) << title;
    EXPECT_NEAR(std::stod((*it)[1]), xa + xb * std::log2(bytes), 0.15) << title;
    EXPECT_NEAR(std::stod((*it)[2]), ya + yb * busbw.at(static_cast<std::uint64_t>(bytes)), 0.15)
        << title;
  }
  EXPECT_EQ(points, busbw.size());
}

TEST(SvgPlot, NothingToPlotOrAnAbsentCollectiveIsAUsageError) {
  PlotOptions o;
  o.collective = "alltoall";
  EXPECT_THROW(render_plot({read_result_file(result_fixture("base.json"))}, o), Error);
  ResultFile empty;
  empty.path = "empty.json";
  EXPECT_THROW(render_plot({empty}, {}), Error);
}

}  // namespace
}  // namespace cb
