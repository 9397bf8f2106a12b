// tests/unit/release_notice_test.cpp — release notices without a database
// (lib/core/release_board.hpp): a hand-off's payload names the grant, any other payload is a
// name, and only the waiter named by owner and ticket takes a recorded hand-off, once.
#include <gtest/gtest.h>

#include "core/release_board.hpp"

namespace dblock::detail {
namespace {

const std::string us(1, '\x1f');

TEST(ReleaseNotice, AHandOffPayloadNamesTheLockOwnerTicketAndFence) {
  const auto n = parse_release_notice("orders" + us + "m0123abcd" + us + "42" + us + "1099511627777");
  EXPECT_EQ(n.name, "orders");
  EXPECT_EQ(n.owner, "m0123abcd");
  EXPECT_EQ(n.ticket, 42);
  EXPECT_EQ(n.fence, 1099511627777);
}

TEST(ReleaseNotice, ANameThatContainsTheSeparatorStaysWholeInAHandOff) {
  const auto n = parse_release_notice("a" + us + "b" + us + "owner" + us + "7" + us + "9");
  EXPECT_EQ(n.name, "a" + us + "b");
  EXPECT_EQ(n.owner, "owner");
  EXPECT_EQ(n.ticket, 7);
  EXPECT_EQ(n.fence, 9);
}

TEST(ReleaseNotice, AnyOtherPayloadIsAPlainName) {
  for (const std::string& p : {std::string("orders"), "x" + us + "y", "x" + us + "o" + us + "12",
                              "x" + us + "o" + us + "1a" + us + "3", "x" + us + "o" + us + "1" + us + "",
                              "x" + us + us + "1" + us + "2", us + "o" + us + "1" + us + "2",
                              "x" + us + "o" + us + "-1" + us + "2", "x" + us + "o" + us + "1" + us + "1234567890123456789"}) {
    const auto n = parse_release_notice(p);
    EXPECT_EQ(n.name, p);
    EXPECT_TRUE(n.owner.empty()) << p;
  }
}

TEST(ReleaseNotice, OnlyTheNamedWaiterTakesAHandOffAndOnlyOnce) {
  auto& board = release_board::get();
  const std::string name = "release-notice-unit";
  const auto before = board.generation(name);
  board.notice(parse_release_notice(name + us + "owner-a" + us + "5" + us + "77"));
  EXPECT_EQ(board.generation(name), before + 1);  // a hand-off wakes the name's waiters too
  EXPECT_FALSE(board.take_handed(name, "owner-b", 5));
  EXPECT_FALSE(board.take_handed(name, "owner-a", 6));
  EXPECT_FALSE(board.take_handed(name + "x", "owner-a", 5));
  EXPECT_EQ(board.take_handed(name, "owner-a", 5), std::optional<std::int64_t>(77));
  EXPECT_FALSE(board.take_handed(name, "owner-a", 5));
  board.notice(parse_release_notice(name));  // a plain release records nothing
  EXPECT_EQ(board.generation(name), before + 2);
  EXPECT_FALSE(board.take_handed(name, "", 0));
}

}  // namespace
}  // namespace dblock::detail
