// The identity file (identity.h): written and read back, a copy told by its inode, bad
// lines named, and fork/adopt under the log's lock.
#include "oplog/identity.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "oplog/cursors.h"
#include "oplog/oplog.h"
#include "oplog/test_log.h"

namespace clickatron::oplog {
namespace {

// A log of records 1..n with cursor realtime-0.slot-0 at n, its rounds file, and an identity.
Identity MakeLog(const std::string& dir, uint64_t n) {
  auto log = Oplog::Open(dir, {});
  EXPECT_TRUE(log.ok()) << log.status().message();
  for (uint64_t i = 1; i <= n; ++i) EXPECT_TRUE((*log)->Append("record " + std::to_string(i)).ok());
  EXPECT_TRUE((*log)->Sync().ok());
  EXPECT_TRUE((*log)->SetCursor("realtime-0.slot-0", n).ok());
  EXPECT_TRUE((*log)->SaveCursors().ok());
  std::ofstream(dir + "/delivery-realtime-0.slot-0.rounds") << "boot x\n" << n << "\n";
  Result<Identity> id = NewIdentity(dir, "", 1);
  EXPECT_TRUE(id.ok()) << id.status().message();
  EXPECT_TRUE(SaveIdentity(dir, *id).ok());
  return *id;
}

TEST(Identity, WrittenAndReadBackWhereItWasCreated) {
  TestDir dir;
  EXPECT_TRUE(LoadIdentity(dir.path())->id.empty());  // no file yet
  Result<Identity> id = NewIdentity(dir.path(), "", 1);
  ASSERT_TRUE(id.ok()) << id.status().message();
  EXPECT_EQ(id->id.size(), 16u);
  EXPECT_EQ(id->source, id->id);
  ASSERT_TRUE(SaveIdentity(dir.path(), *id).ok());
  Result<Identity> back = LoadIdentity(dir.path());
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->id, id->id);
  EXPECT_EQ(back->location.inode, id->location.inode);
  EXPECT_EQ(back->location.path, dir.path());
  EXPECT_EQ(LocationConflict(dir.path(), *back, *LocationOf(dir.path())), "");
  // A directory from before identities keeps its node-id as source.
  EXPECT_EQ(NewIdentity(dir.path(), "api-1", 1)->source, "api-1");
}

TEST(Identity, ACopyIsAnotherInode) {
  TestDir dir;
  Identity id = MakeLog(dir.path(), 3);
  const std::string copy = dir / "copy";
  std::filesystem::create_directory(copy);
  std::filesystem::copy_file(dir.path() + "/identity", copy + "/identity");
  Result<Identity> copied = LoadIdentity(copy);
  ASSERT_TRUE(copied.ok());
  const std::string why = LocationConflict(copy, *copied, *LocationOf(copy));
  EXPECT_NE(why.find("holds identity " + id.id), std::string::npos) << why;
  EXPECT_NE(why.find("a copy or a restore"), std::string::npos) << why;
  // A rename keeps the inode: not a conflict.
  const std::string moved = dir / "moved";
  std::filesystem::rename(copy, moved);
  Result<Identity> at_copy = NewIdentity(moved, "", 1);
  EXPECT_EQ(LocationConflict(moved, *at_copy, *LocationOf(moved)), "");
}

TEST(Identity, BadLinesAreNamed) {
  TestDir dir;
  std::ofstream(dir / "identity") << "id=ab\nsource=ab\ncolour=blue\n";
  Result<Identity> id = LoadIdentity(dir.path());
  ASSERT_FALSE(id.ok());
  EXPECT_NE(id.status().message().find("identity line 3: 'colour=blue'"), std::string::npos) << id.status().message();
  std::ofstream(dir / "identity") << "id=ab\n";
  EXPECT_NE(LoadIdentity(dir.path()).status().message().find("no id= or no source="), std::string::npos);
}

TEST(Identity, ForkMovesTheCursorsAndTakesANewIdentity) {
  TestDir dir;
  Identity was = MakeLog(dir.path(), 5);
  {
    auto running = Oplog::Open(dir.path(), {});  // the API
    ASSERT_TRUE(running.ok());
    Result<ForkResult> refused = ForkIdentity(dir.path(), 0, nullptr);
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.status().message().find("in use by another process"), std::string::npos);
  }
  EXPECT_FALSE(ForkIdentity(dir.path(), 7, nullptr).ok());  // past the end of the log
  Result<ForkResult> f = ForkIdentity(dir.path(), 3, [](const std::string& name) {
    return std::vector<std::string>{"delivery-" + name + ".rounds"};
  });
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f->shared_through, 2u);
  EXPECT_EQ(f->removed, std::vector<std::string>{dir / "delivery-realtime-0.slot-0.rounds"});
  EXPECT_EQ(LoadCursors(dir.path())->at("realtime-0.slot-0"), 2u);
  Result<Identity> now = LoadIdentity(dir.path());
  ASSERT_TRUE(now.ok());
  EXPECT_NE(now->id, was.id);
  EXPECT_EQ(now->source, now->id);
  EXPECT_EQ(now->own_from_seq, 3u);
  EXPECT_TRUE(now->release_late);
  EXPECT_EQ(now->conflict, "");
}

TEST(Identity, AdoptRecordsTheNewPlaceAndClearsTheConflict) {
  TestDir dir;
  Identity id = MakeLog(dir.path(), 2);
  id.location.inode += 1;  // as if created elsewhere
  id.conflict = "a copy";
  ASSERT_TRUE(SaveIdentity(dir.path(), id).ok());
  Result<Identity> adopted = AdoptIdentity(dir.path());
  ASSERT_TRUE(adopted.ok()) << adopted.status().message();
  Result<Identity> back = LoadIdentity(dir.path());
  EXPECT_EQ(back->id, id.id);
  EXPECT_EQ(back->conflict, "");
  EXPECT_EQ(LocationConflict(dir.path(), *back, *LocationOf(dir.path())), "");
}

}  // namespace
}  // namespace clickatron::oplog
