#include <gtest/gtest.h>

#include "common/error.hpp"
#include "report/plot_axis.hpp"
#include "report/svg_plot.hpp"
#include "report_fixtures.hpp"

namespace cb {
namespace {

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
