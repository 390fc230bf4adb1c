#include "realtime/export_footer.h"

#include <gtest/gtest.h>
#include <xxhash.h>

namespace clickatron::realtime {
namespace {

TEST(ExportFooter, FormatsParsesAndVerifies) {
  std::string body = "u|a.c3p1,5\nu|b.c3p1,-1\n";
  std::string text = body;
  AppendExportFooter(&text, {2, XXH64(body.data(), body.size(), 0)});
  char expect[80];
  std::snprintf(expect, sizeof expect, "#END count=2 xxh64=%016llx\n",
                static_cast<unsigned long long>(XXH64(body.data(), body.size(), 0)));
  EXPECT_EQ(text.substr(body.size()), expect);
  Result<ExportFooter> f = ParseExportFooter(text.substr(body.size()));
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f->count, 2u);
  EXPECT_TRUE(VerifyExport(text).ok());
}

TEST(ExportFooter, EmptyExportHasAFooterToo) {
  std::string text;
  AppendExportFooter(&text, {0, XXH64("", 0, 0)});
  EXPECT_EQ(text, "#END count=0 xxh64=ef46db3751d8e999\n");
  EXPECT_TRUE(VerifyExport(text).ok());
}

TEST(ExportFooter, DetectsTruncationAndDamage) {
  std::string body = "u|a.c3p1,5\nu|b.c3p1,-1\n";
  std::string text = body;
  AppendExportFooter(&text, {2, XXH64(body.data(), body.size(), 0)});
  EXPECT_EQ(VerifyExport(body).message(), "no #END footer: the export is truncated");
  EXPECT_EQ(VerifyExport(text.substr(0, text.size() - 1)).message(), "no #END footer: the export is truncated");
  EXPECT_EQ(VerifyExport(text.substr(11)).message(), "export has 1 records but its footer says 2");
  std::string damaged = text;
  damaged[9] = '6';
  EXPECT_EQ(VerifyExport(damaged).message(), "export bytes do not match the footer's xxh64");
  EXPECT_FALSE(ParseExportFooter("#END count=2 xxh64=ABC").ok());
  EXPECT_FALSE(ParseExportFooter("#END count=x xxh64=0000000000000000").ok());
}

}  // namespace
}  // namespace clickatron::realtime
