// The launch's control measurement: the figures are measured at all, a launch whose control
// moved is named with the figures, and the control round-trips through the meta's JSON.
#include <gtest/gtest.h>

#include "collectives/engine/control_measurement.hpp"
#include "common/record.hpp"

namespace cb {
namespace {

LaunchControl samples(double start_ns, double middle_ns, double end_ns, double compute_end = 400) {
  LaunchControl c;
  c.samples = {{"start", start_ns, 400}, {"middle", middle_ns, 400}, {"end", end_ns, compute_end}};
  return c;
}

TEST(ControlMeasurement, MeasuresBothFigures) {
  ControlSample s = measure_control("start");
  EXPECT_EQ(s.at, "start");
  EXPECT_GT(s.pingpong_ns, 0);
  EXPECT_GT(s.compute_us, 0);
}

TEST(ControlMeasurement, FiguresAreTheMedianOfTheSamples) {
  LaunchControl c = samples(100, 300, 110);
  EXPECT_DOUBLE_EQ(c.pingpong_ns(), 110);
  EXPECT_DOUBLE_EQ(c.pingpong_moved(), 3);
  EXPECT_DOUBLE_EQ(c.compute_us(), 400);
}

TEST(ControlMeasurement, MovedWithinALaunchIsNamedWithTheFigures) {
  EXPECT_EQ(control_moved(samples(100, 120, 140)), "");  // 1.4x: within 1.5x
  EXPECT_EQ(control_moved(samples(100, 120, 160)),
            "core-to-core round trip 100 ns at the start, 160 ns at the end (1.6x)");
  // The compute loop: 400 -> 520 us is 1.3x, beyond 1.25x.
  EXPECT_EQ(control_moved(samples(100, 100, 100, 520)),
            "fixed compute loop 400 us at the start, 520 us at the end (1.3x)");
}

TEST(ControlMeasurement, RoundTripsThroughTheMeta) {
  RunMeta m;
  LaunchControl c = samples(100, 120, 140);
  c.repeat = 2;
  c.case_order_seed = 12345;
  c.steal_fraction = 0.25;
  c.load_average = 1.5;
  m.launches = {c};
  RunMeta back = nlohmann::json(m).get<RunMeta>();
  ASSERT_EQ(back.launches.size(), 1u);
  EXPECT_EQ(back.launches[0].repeat, 2);
  EXPECT_EQ(back.launches[0].case_order_seed, 12345u);
  EXPECT_EQ(back.launches[0].samples.size(), 3u);
  EXPECT_DOUBLE_EQ(back.launches[0].samples[2].pingpong_ns, 140);
  EXPECT_DOUBLE_EQ(back.launches[0].steal_fraction, 0.25);
}

}  // namespace
}  // namespace cb
