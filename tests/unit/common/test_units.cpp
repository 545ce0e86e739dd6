#include <gtest/gtest.h>

#include "common/error.hpp"
#include "common/units.hpp"

namespace cb {
namespace {

TEST(ParseSize, PlainAndBinarySuffixes) {
  EXPECT_EQ(parse_size("8"), 8u);
  EXPECT_EQ(parse_size("0"), 0u);
  EXPECT_EQ(parse_size("64K"), 64u * 1024);
  EXPECT_EQ(parse_size("64k"), 64u * 1024);
  EXPECT_EQ(parse_size("4M"), 4u << 20);
  EXPECT_EQ(parse_size("1G"), 1u << 30);
  EXPECT_EQ(parse_size("512KiB"), 512u * 1024);
  EXPECT_EQ(parse_size("2MiB"), 2u << 20);
  EXPECT_EQ(parse_size("3GiB"), 3ull << 30);
  EXPECT_EQ(parse_size("16B"), 16u);
}

TEST(ParseSize, RejectsGarbageAsUsageError) {
  for (const char* bad : {"", "abc", "-1", "1.5M", "4X", "M", "1 M", "12KiBs"}) {
    try {
      parse_size(bad, "--max-bytes");
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Usage);
      EXPECT_NE(std::string(e.what()).find("--max-bytes"), std::string::npos);
    }
  }
}

TEST(ParseSize, RejectsOverflow) {
  EXPECT_THROW(parse_size("99999999999999G"), Error);
}

TEST(FormatSize, ScalesToBinaryUnits) {
  EXPECT_EQ(format_size(8), "8 B");
  EXPECT_EQ(format_size(1023), "1023 B");
  EXPECT_EQ(format_size(1024), "1 KiB");
  EXPECT_EQ(format_size(1536), "1.5 KiB");
  EXPECT_EQ(format_size(1038080), "1014 KiB");  // not 1.01e+03
  EXPECT_EQ(format_size(129331), "126 KiB");
  EXPECT_EQ(format_size(4u << 20), "4 MiB");
  EXPECT_EQ(format_size(1ull << 30), "1 GiB");
}

TEST(FormatTime, PicksUnit) {
  EXPECT_EQ(format_time_us(0.42), "0.42 us");
  EXPECT_EQ(format_time_us(12345), "12.3 ms");
  EXPECT_EQ(format_time_us(2.5e6), "2.5 s");
}

TEST(ParseNumbers, StrictIntegersAndDoubles) {
  EXPECT_EQ(parse_int("42", "x"), 42);
  EXPECT_THROW(parse_int("4x", "x"), Error);
  EXPECT_THROW(parse_int("", "x"), Error);
  EXPECT_DOUBLE_EQ(parse_double("0.25", "x"), 0.25);
  EXPECT_THROW(parse_double("nan", "x"), Error);
  EXPECT_THROW(parse_double("1e400", "x"), Error);
}

TEST(ExitCodes, MatchContract) {
  EXPECT_EQ(exit_code(ErrorKind::Runtime), 1);
  EXPECT_EQ(exit_code(ErrorKind::Usage), 2);
  EXPECT_EQ(exit_code(ErrorKind::Validation), 3);
  EXPECT_EQ(exit_code(ErrorKind::Timeout), 4);
  EXPECT_EQ(exit_code(ErrorKind::Regression), 5);
}

}  // namespace
}  // namespace cb
