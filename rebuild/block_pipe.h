// BlockPipe: a fixed set of reusable blocks passed in order from one producer thread to
// one consumer thread, so one stage of a rebuild step runs ahead of the next by at most
// `count` blocks and memory stays bounded.
//
//   producer: while (Block* b = pipe.TakeFree()) { fill b; pipe.PushFull(b); }  pipe.Close();
//   consumer: while (Block* b = pipe.TakeFull()) { use b; clear b; pipe.GiveBack(b); }
//
// A consumer that gives up calls Cancel(): the producer's next TakeFree() returns nullptr
// (the producer never waits anywhere else). Everything the producer wrote before Close()
// is visible to the consumer once TakeFull() has returned nullptr.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>

namespace clickatron::rebuild {

template <typename Block>
class BlockPipe {
 public:
  explicit BlockPipe(size_t count) : blocks_(count) {
    for (Block& b : blocks_) free_.push_back(&b);
  }
  BlockPipe(const BlockPipe&) = delete;
  BlockPipe& operator=(const BlockPipe&) = delete;

  // Producer: an empty block to fill; nullptr once the consumer has cancelled.
  Block* TakeFree() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return !free_.empty() || cancelled_; });
    if (cancelled_) return nullptr;
    Block* b = free_.front();
    free_.pop_front();
    return b;
  }
  // Producer: a filled block, for the consumer.
  void PushFull(Block* block) { Put(&full_, block); }
  // Producer: nothing more will come.
  void Close() {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
    cv_.notify_all();
  }

  // Consumer: the next full block; nullptr after the last one once the producer closed.
  Block* TakeFull() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return !full_.empty() || closed_; });
    if (full_.empty()) return nullptr;
    Block* b = full_.front();
    full_.pop_front();
    return b;
  }
  // Consumer (or a producer with nothing to send): a block to fill again, already emptied.
  void GiveBack(Block* block) { Put(&free_, block); }
  // Consumer: stop the producer at its next TakeFree().
  void Cancel() {
    std::lock_guard<std::mutex> lock(mu_);
    cancelled_ = true;
    cv_.notify_all();
  }

 private:
  void Put(std::deque<Block*>* queue, Block* block) {
    std::lock_guard<std::mutex> lock(mu_);
    queue->push_back(block);
    cv_.notify_all();
  }

  std::deque<Block> blocks_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Block*> free_, full_;  // guarded by mu_
  bool closed_ = false, cancelled_ = false;
};

}  // namespace clickatron::rebuild
