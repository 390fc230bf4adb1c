// The `#END` footer: its text, every malformed form, the running check, and a whole
// stream checked in chunks cut anywhere (a truncation or a changed byte is always found).
#include "keyformat/footer.h"

#include <gtest/gtest.h>

#include "keyformat/hex64.h"

namespace clickatron {
namespace {

uint64_t Xxh(std::string_view bytes) { return XXH64(bytes.data(), bytes.size(), kFooterHashSeed); }

// A whole text checked as one chunk.
Status CheckWhole(std::string_view text) {
  FootedStreamCheck check;
  check.Add(text);
  return check.Finish();
}

TEST(Footer, Formats) {
  EXPECT_EQ(FormatFooter(Footer{3, 0x0123456789abcdefull}), "#END count=3 xxh64=0123456789abcdef\n");
  EXPECT_EQ(FormatFooter(Footer{0, Xxh("")}), "#END count=0 xxh64=ef46db3751d8e999\n");  // an empty export
  const std::string body = "u|a.c3p1,5\nu|b.c3p1,-1\n";
  EXPECT_EQ(FormatFooter(Footer{2, Xxh(body)}), "#END count=2 xxh64=" + Hex64(Xxh(body)) + "\n");
}

TEST(Footer, ParsesWithOrWithoutItsNewline) {
  for (const char* line : {"#END count=3 xxh64=0123456789abcdef", "#END count=3 xxh64=0123456789abcdef\n"}) {
    Result<Footer> f = ParseFooter(line);
    ASSERT_TRUE(f.ok()) << f.status().message();
    EXPECT_EQ(f->count, 3u);
    EXPECT_EQ(f->xxh64, 0x0123456789abcdefull);
  }
  Result<Footer> big = ParseFooter("#END count=18446744073709551615 xxh64=ffffffffffffffff");
  ASSERT_TRUE(big.ok());
  EXPECT_EQ(big->count, UINT64_MAX);
}

TEST(Footer, RoundTrips) {
  for (Footer f : {Footer{0, 0}, Footer{1, 0xef46db3751d8e999ull}, Footer{UINT64_MAX, UINT64_MAX}}) {
    Result<Footer> back = ParseFooter(FormatFooter(f));
    ASSERT_TRUE(back.ok()) << back.status().message();
    EXPECT_EQ(back->count, f.count);
    EXPECT_EQ(back->xxh64, f.xxh64);
  }
}

TEST(Footer, RefusesEveryMalformedForm) {
  for (const char* bad : {
           "",                                              // nothing
           "END count=3 xxh64=0123456789abcdef",            // no '#'
           "#END",                                          // prefix only
           "#END count=3",                                  // no hash
           "#END count= xxh64=0123456789abcdef",            // empty count
           "#END count=x xxh64=0123456789abcdef",           // count not a number
           "#END count=-1 xxh64=0123456789abcdef",          // negative count
           "#END count=+1 xxh64=0123456789abcdef",          // signed count
           "#END count=3x xxh64=0123456789abcdef",          // trailing garbage in the count
           "#END count=18446744073709551616 xxh64=0123456789abcdef",  // count overflows
           "#END count=3  xxh64=0123456789abcdef",          // two spaces
           "#END xxh64=0123456789abcdef count=3",           // fields swapped
           "#END count=3 xxh64=0123",                       // short hash
           "#END count=3 xxh64=0123456789abcdef0",          // long hash
           "#END count=3 xxh64=0123456789ABCDEF",           // uppercase hash
           "#END count=3 xxh64=0123456789abcdef ",          // trailing space
           "#END count=3 xxh64=0123456789abcdef\n\n",       // two newlines
           "#end count=3 xxh64=0123456789abcdef",           // lowercase prefix
       }) {
    EXPECT_FALSE(ParseFooter(bad).ok()) << bad;
  }
  EXPECT_EQ(ParseFooter("#END count=3").status().message(),
            "footer '#END count=3' is not '#END count=<n> xxh64=<16 hex>'");
  EXPECT_TRUE(IsFooter("#END count=3"));  // meant as a footer, though malformed
  EXPECT_FALSE(IsFooter("#ENDcount=3"));
  EXPECT_FALSE(IsFooter("u|a.c3p1,5"));
}

TEST(FooterCheck, CountsHashesAndVerifies) {
  const std::string body = "a,1\nb,2\n";
  FooterCheck check;
  check.AddLineWithNewline(std::string_view(body.data(), 3));
  check.AddLineWithNewline(std::string_view(body.data() + 4, 3));
  EXPECT_EQ(check.count(), 2u);
  EXPECT_EQ(check.digest(), Xxh(body));
  const std::string footer = FormatFooter(Footer{2, Xxh(body)});
  EXPECT_TRUE(check.Verify(footer.substr(0, footer.size() - 1)).ok());
  EXPECT_TRUE(check.Verify(footer).ok());
  EXPECT_EQ(check.Verify("#END count=3 xxh64=0000000000000000").message(), "footer says 3 records but 2 were read");
  EXPECT_EQ(check.Verify("#END count=2 xxh64=0000000000000000").message(),
            "checksum mismatch: footer says xxh64=0000000000000000 but the bytes hash to " + Hex64(Xxh(body)));
  EXPECT_EQ(check.Verify("#END count=2").message(), "footer '#END count=2' is not '#END count=<n> xxh64=<16 hex>'");
  FooterCheck bytes;
  bytes.AddBytes(body, 2);
  EXPECT_TRUE(bytes.Verify(footer).ok());
}

// Lines are gathered and hashed in pieces: the digest is the hash of all the bytes in
// order whatever the mix of short lines, lines longer than the gathering buffer, raw bytes,
// and digests asked for on the way.
TEST(FooterCheck, HashesEveryByteInOrderWhateverTheLineSizes) {
  std::string body;
  FooterCheck check;
  uint64_t lines = 0;
  for (size_t i = 0; i < 3000; ++i) {
    const size_t size = i % 97 == 0 ? 20000 + i : 1 + (i * 7919) % 300;  // some longer than the buffer
    std::string line(size, char('a' + i % 26));
    line.push_back('\n');
    if (i % 10 == 0) {
      check.AddBytes(line, 1);
    } else {
      check.AddLineWithNewline(std::string_view(line.data(), line.size() - 1));
    }
    body += line;
    ++lines;
    if (i % 500 == 0) {
      EXPECT_EQ(check.digest(), Xxh(body)) << i;
    }
  }
  EXPECT_EQ(check.count(), lines);
  EXPECT_EQ(check.digest(), Xxh(body));
  EXPECT_TRUE(check.Verify(FormatFooter(Footer{lines, Xxh(body)})).ok());
}

TEST(FootedStreamCheck, AcceptsAWholeStreamInAnyChunks) {
  const std::string body = "u|a.c3p1,5\nu|b.c3p1,-1\n";
  const std::string text = body + FormatFooter(Footer{2, Xxh(body)});
  for (size_t cut = 1; cut <= 4; ++cut) {  // chunks of 1..4 bytes: every split of every line
    FootedStreamCheck check;
    for (size_t i = 0; i < text.size(); i += cut) check.Add(std::string_view(text).substr(i, cut));
    ASSERT_TRUE(check.Finish().ok()) << cut << ": " << check.Finish().message();
    EXPECT_EQ(check.records(), 2u);
  }
  const std::string empty = FormatFooter(Footer{0, Xxh("")});
  EXPECT_TRUE(CheckWhole(empty).ok());
}

TEST(FootedStreamCheck, FindsTruncationAndDamage) {
  const std::string body = "u|a.c3p1,5\nu|b.c3p1,-1\n";
  const std::string text = body + FormatFooter(Footer{2, Xxh(body)});
  EXPECT_EQ(CheckWhole("").message(), "the answer is empty (no #END footer)");
  EXPECT_EQ(CheckWhole(body).message(), "the answer does not end with an #END footer (truncated)");
  EXPECT_EQ(CheckWhole(text.substr(0, text.size() - 1)).message(),
            "the answer ends in the middle of a line (truncated)");
  EXPECT_EQ(CheckWhole(text.substr(11)).message(), "footer says 2 records but 1 were read");
  std::string damaged = text;
  damaged[9] = '6';
  EXPECT_NE(CheckWhole(damaged).message().find("checksum mismatch"), std::string::npos);
  EXPECT_FALSE(CheckWhole(body + "#END count=2 xxh64=ABC\n").ok());
  EXPECT_FALSE(CheckWhole(body + "#END count=x xxh64=0000000000000000\n").ok());
  // Every cut short of the whole text is refused, whatever the chunking.
  for (size_t n = 0; n < text.size(); ++n) EXPECT_FALSE(CheckWhole(text.substr(0, n)).ok()) << n;
}

}  // namespace
}  // namespace clickatron
