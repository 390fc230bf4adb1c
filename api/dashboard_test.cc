// The dashboard's pure pieces: which file names StaticFiles serves and as what
// (static_files.h), loading a ui-dir, and the key listing helpers of /keys and /subtotals
// (key_listing.h).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "api/key_listing.h"
#include "api/static_files.h"
#include "base/test_dir.h"

namespace clickatron {
namespace {

TEST(StaticFiles, ServableNames) {
  for (const char* ok : {"index.html", "app.js", "style.css", "a-b_c.min.js", "x.json", "logo.svg", "i.png"}) {
    EXPECT_TRUE(IsServableName(ok)) << ok;
  }
  for (const char* bad : {"", ".js", "..", "../x.js", "a/b.js", "a..js", "a.js.", ".hidden.js", "a%2e.js",
                          "a b.js", "noext", "x.exe", "x.JS", "a\\b.js"}) {
    EXPECT_FALSE(IsServableName(bad)) << bad;
  }
  EXPECT_FALSE(IsServableName(std::string(126, 'a') + ".js"));
  EXPECT_EQ(ContentTypeOf("index.html"), "text/html; charset=utf-8");
  EXPECT_EQ(ContentTypeOf("app.js"), "text/javascript; charset=utf-8");
  EXPECT_EQ(ContentTypeOf("s.css"), "text/css; charset=utf-8");
  EXPECT_EQ(ContentTypeOf("x.png"), "image/png");
  EXPECT_EQ(ContentTypeOf(".js"), "");
  EXPECT_EQ(ContentTypeOf("x.txt"), "");
}

void Write(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

TEST(StaticFiles, LoadNamesWhatIsMissing) {
  TestDir dir;
  const std::string ui = dir.path() + "/ui";
  const std::string chart = dir.path() + "/chart.min.js";
  Write(chart, "window.Chart = 1;");
  Result<StaticFiles> f = StaticFiles::Load(ui, chart);
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.status().message().find("ui-dir " + ui), std::string::npos) << f.status().message();
  std::filesystem::create_directories(ui);
  f = StaticFiles::Load(ui, chart);
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.status().message().find("has no index.html"), std::string::npos) << f.status().message();
  Write(ui + "/index.html", "<!doctype html>");
  Write(ui + "/app.js", "1");
  Write(ui + "/notes.txt", "not served");
  f = StaticFiles::Load(ui, dir.path() + "/missing.js");
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.status().message().find("ui-chartjs " + dir.path() + "/missing.js"), std::string::npos);
  EXPECT_NE(f.status().message().find("libjs-chart.js"), std::string::npos);
  f = StaticFiles::Load(ui, chart);
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f->size(), 3u);  // index.html, app.js, chart.js
  Write(ui + "/chart.js", "a second Chart.js");
  f = StaticFiles::Load(ui, chart);
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.status().message().find("chart.js"), std::string::npos);
  std::filesystem::remove(ui + "/chart.js");
  Write(ui + "/big.js", std::string(kMaxUiFileBytes + 1, 'x'));
  f = StaticFiles::Load(ui, chart);
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.status().message().find("is larger than"), std::string::npos);
}

// A build tree has ui beside the binary; an installed tree (/usr/bin, /usr/share) has not.
TEST(StaticFiles, DefaultUiDirBesideTheBinaryElseTheInstalledOne) {
  TestDir dir;
  const std::filesystem::path bin = dir.path() + "/usr/bin";
  std::filesystem::create_directories(bin);
  EXPECT_EQ(UiDirBeside(bin / "clickatron-api"), dir.path() + "/usr/share/clickatron/ui");
  std::filesystem::create_directories(bin / "ui");
  EXPECT_EQ(UiDirBeside(bin / "clickatron-api"), dir.path() + "/usr/bin/ui");
}

TEST(KeyListing, ListablePrefix) {
  EXPECT_TRUE(ListablePrefix(""));
  EXPECT_TRUE(ListablePrefix("je"));
  EXPECT_TRUE(ListablePrefix("abcdefghijk"));
  EXPECT_FALSE(ListablePrefix("abcdefghijkl"));  // 12 bytes: only a hash is that long
  for (const char* bad : {"a.b", "a|b", "a,b", "a:b", "a b", "\x7f", "\xc3\xa9"}) {
    EXPECT_FALSE(ListablePrefix(bad)) << bad;
  }
}

TEST(KeyListing, ListedKeys) {
  EXPECT_EQ(ArchiveListedKey("u|jehiah", "u"), "jehiah");
  EXPECT_EQ(ArchiveListedKey("u|h0aMB8AuNw4=", "u"), "h0aMB8AuNw4=");
  EXPECT_EQ(ArchiveListedKey("u|", "u"), "");
  EXPECT_EQ(ArchiveListedKey("uu|x", "u"), "");
  EXPECT_EQ(ArchiveListedKey("c.u|jehiah.c41l", "u"), "");
  EXPECT_EQ(ArchiveListedKey("u|jehiah.c41l", "u"), "");  // a realtime key is not an archive total
  EXPECT_EQ(RealtimeListedKey("u|jehiah.c41l", "u"), "jehiah");
  EXPECT_EQ(RealtimeListedKey("u|j.c41l", "u"), "j");
  EXPECT_EQ(RealtimeListedKey("u|jehiah", "u"), "");
  EXPECT_EQ(RealtimeListedKey("u|.c41l", "u"), "");
  EXPECT_EQ(RealtimeListedKey("c.u|jehiah.US.c41l", "u"), "");
  EXPECT_EQ(AfterRealtimeKey("u", "jehiah"), "u|jehiah.\x7f");
  // after it come the next keys, never another hour of jehiah (docs/formats.md#key-order)
  EXPECT_LT(std::string("u|jehiah.vvvv"), AfterRealtimeKey("u", "jehiah"));
  EXPECT_GT(std::string("u|jehiah/"), AfterRealtimeKey("u", "jehiah"));
  EXPECT_GT(std::string("u|jehiah0.c41l"), AfterRealtimeKey("u", "jehiah"));
}

TEST(KeyListing, FirstPartsAndHours) {
  char sep = 'x';
  EXPECT_EQ(FirstPart("c.u|jehiah.US.c41l", &sep), "c");
  EXPECT_EQ(sep, '.');
  EXPECT_EQ(FirstPart("u|jehiah", &sep), "u");
  EXPECT_EQ(sep, '|');
  EXPECT_EQ(FirstPart("nothing", &sep), "");
  EXPECT_EQ(sep, '\0');
  EXPECT_EQ(FirstPart(".x", &sep), "");
  EXPECT_EQ(AfterPart("c", '.'), "c.\x7f");
  EXPECT_LT(std::string("c.zzzz|~~~"), AfterPart("c", '.'));
  EXPECT_GT(std::string("c0.u|x"), AfterPart("c", '.'));
  EXPECT_EQ(HourOfRecordKey("c.u|jehiah.US.c41l"), 1333314000);
  EXPECT_EQ(HourOfRecordKey("c.u|jehiah.c41l"), 1333314000);
  EXPECT_EQ(HourOfRecordKey("c.u|jehiah.US.c4"), -1);
  EXPECT_EQ(HourOfRecordKey("c.u|jehiahXc41l"), -1);
  EXPECT_EQ(HourOfRecordKey("c.u|jehiah.zzzz"), -1);
  EXPECT_EQ(HourOfRecordKey("c.u|jehiah.c41"), -1);  // a day rollup has no hour
  EXPECT_TRUE(IsRollupKey("c.u|jehiah.c41"));
  EXPECT_TRUE(IsRollupKey("c.u|jehiah.c4"));
  EXPECT_FALSE(IsRollupKey("c.u|jehiah.c41l"));
  EXPECT_FALSE(IsRollupKey("u|jehiah"));
  EXPECT_FALSE(IsRollupKey("u|jehiah.c41"));  // not a subtotal key
  EXPECT_FALSE(IsRollupKey("_l|h0aMB8AuNw4="));
}

}  // namespace
}  // namespace clickatron
