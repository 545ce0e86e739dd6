#include <gtest/gtest.h>

#include "collectives/catalogue/names.hpp"
#include "common/error.hpp"

namespace cb {
namespace {

TEST(Options, ListsSplitTrimAndDeduplicate) {
  EXPECT_EQ(split_list(" a, b ,,c "), (std::vector<std::string>{"a", "b", "c"}));
  auto c = parse_collectives("allreduce,all_reduce,bcast");
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[1], Collective::Broadcast);
  EXPECT_EQ(parse_collectives("all").size(), 11u);
  EXPECT_EQ(parse_ops("all").size(), 5u);
}

TEST(Options, UnknownNamesAreUsageErrorsListingWhatIsAccepted) {
  try {
    parse_collectives("allreduce,alltoal");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage);
    std::string m = e.what();
    EXPECT_NE(m.find("alltoal"), std::string::npos);
    EXPECT_NE(m.find("alltoall"), std::string::npos);
  }
  EXPECT_THROW(parse_dtypes("float,fp128"), Error);
  EXPECT_THROW(parse_ops("xor"), Error);
  EXPECT_THROW(parse_placement("sideways"), Error);
  EXPECT_THROW(parse_collectives(""), Error);
}

TEST(Options, Roots) {
  bool all = false;
  EXPECT_EQ(parse_root("3", all), 3);
  EXPECT_FALSE(all);
  parse_root("all", all);
  EXPECT_TRUE(all);
  EXPECT_THROW(parse_root("-1", all), Error);
  EXPECT_THROW(parse_root("x", all), Error);
}

TEST(Options, CommandLineQuoting) {
  const char* argv[] = {"commbench", "run", "-c", "all reduce", "--x=$HOME"};
  EXPECT_EQ(command_line(5, const_cast<char**>(argv)), "commbench run -c 'all reduce' '--x=$HOME'");
}

}  // namespace
}  // namespace cb
