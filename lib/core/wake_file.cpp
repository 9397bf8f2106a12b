// lib/core/wake_file.cpp — see wake_file.hpp. The file's layout: a 128-byte header (magic,
// slot count), then `slots` slots of 128 bytes. Every shared word is accessed through
// std::atomic_ref (lock-free, address-free at these sizes), so processes that map the file
// at different addresses agree; the generation is a 32-bit futex word (shared futexes key
// on the file page, not the address).
#include "core/wake_file.hpp"

#include <fcntl.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstring>
#include <map>
#include <mutex>

#include "core/crypto.hpp"

namespace dblock::detail {

namespace {

constexpr std::uint64_t magic = 0x316b6177'6b6c6264ULL;  // "dblkwak1", little-endian
constexpr std::size_t header_size = 128;

struct header {
  std::uint64_t magic;
  std::uint64_t slots;
  unsigned char pad[header_size - 16];
};

}  // namespace

// One slot. `seq` is a seqlock over the record: odd while a release writes it.
struct wake_file::slot {
  std::uint32_t generation;  // bumped by every post(): the futex word
  std::uint32_t sleepers;    // processes' threads in wait(): post() skips the wake when 0
  std::uint32_t seq;
  std::uint32_t owner_len;
  std::uint64_t name_hash;
  std::int64_t ticket;
  std::int64_t fence;
  std::uint64_t owner[max_owner / 8];
  unsigned char pad[128 - 40 - max_owner];
};
static_assert(sizeof(wake_file::slot) == 128);
static_assert(sizeof(header) == header_size);

namespace {

template <typename T>
std::atomic_ref<T> shared(T& v) noexcept {
  static_assert(std::atomic_ref<T>::is_always_lock_free);
  return std::atomic_ref<T>(v);
}

constexpr std::size_t file_size = header_size + wake_file::slots * sizeof(wake_file::slot);

// Process-wide: one mapping per database file, as long as a session uses it.
std::mutex registry_mu;
std::map<std::string, std::weak_ptr<wake_file>>& registry() {
  static std::map<std::string, std::weak_ptr<wake_file>> r;
  return r;
}

long futex(std::uint32_t* word, int op, std::uint32_t val, const timespec* timeout, std::uint32_t mask) noexcept {
  return syscall(SYS_futex, word, op, val, timeout, nullptr, mask);
}

// Which sleepers a post() wakes (FUTEX_WAKE_BITSET): a hand-off to ticket T wakes the
// sleepers of bit T % 31 (the waiter it handed the name, and any whose ticket shares the bit:
// they look and sleep again); a post that hands nothing wakes every sleeper. A sleeper without
// a ticket has bit 31 only.
constexpr std::uint32_t no_ticket = 1u << 31;
std::uint32_t ticket_bit(std::int64_t ticket) noexcept {
  return ticket > 0 ? 1u << static_cast<unsigned>(ticket % 31) : no_ticket;
}

}  // namespace

std::shared_ptr<wake_file> wake_file::for_database(const std::string& database) noexcept {
  if (database.empty() || database.front() != '/') return nullptr;
  try {
    std::lock_guard l(registry_mu);
    auto& reg = registry();
    if (auto it = reg.find(database); it != reg.end())
      if (auto w = it->second.lock()) return w;
    struct stat db {};
    if (::stat(database.c_str(), &db) != 0) return nullptr;
    const std::string path = database + "-dblock-wake";
    // Created with the database's permission bits and owner, as SQLite gives its -wal and
    // -shm files (umask aside): whoever may write the database may wake its waiters. Never a
    // FIFO or device: O_NONBLOCK opens one without waiting, and it is refused below.
    const int flags = O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK;
    int fd = ::open(path.c_str(), flags | O_CREAT | O_EXCL, db.st_mode & 0666);
    if (fd >= 0) {
      (void)::fchmod(fd, db.st_mode & 0666);
      if (::geteuid() == 0) (void)!::fchown(fd, db.st_uid, db.st_gid);
    } else if (errno == EEXIST) {
      fd = ::open(path.c_str(), flags);
    }
    if (fd < 0) return nullptr;
    struct stat st {};
    bool ok = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
    // Another file of that name (not zeroes, not this format) is left as it is.
    header h0{};
    if (ok && ::pread(fd, &h0, sizeof h0, 0) == static_cast<ssize_t>(sizeof h0))
      ok = (h0.magic == 0 || h0.magic == magic) && (h0.slots == 0 || h0.slots == slots);
    // Only grows: processes that open it at once agree on the size, and zeroes are a valid state.
    if (ok && static_cast<std::size_t>(st.st_size) < file_size) ok = ::ftruncate(fd, file_size) == 0;
    void* map = ok ? ::mmap(nullptr, file_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
    ::close(fd);
    if (map == MAP_FAILED) return nullptr;
    auto* h = static_cast<header*>(map);
    std::uint64_t m = 0;
    shared(h->magic).compare_exchange_strong(m, magic);  // a new file: stamp it
    if (m != 0 && m != magic) {
      ::munmap(map, file_size);
      return nullptr;
    }
    std::uint64_t n = 0;
    shared(h->slots).compare_exchange_strong(n, slots);
    if (n != 0 && n != slots) {
      ::munmap(map, file_size);
      return nullptr;
    }
    std::shared_ptr<wake_file> w(new wake_file(map, file_size));
    reg[database] = w;
    return w;
  } catch (...) {
    return nullptr;
  }
}

wake_file::~wake_file() { ::munmap(map_, size_); }

wake_file::slot& wake_file::at(std::string_view name, std::uint64_t* hash) const noexcept {
  std::uint64_t h = 0;
  try {
    h = static_cast<std::uint64_t>(sha256_int64(name));
  } catch (...) {
    h = 0;  // out of memory in OpenSSL: slot 0, a shared hint
  }
  if (hash) *hash = h;
  return reinterpret_cast<slot*>(static_cast<unsigned char*>(map_) + header_size)[h % slots];
}

std::uint32_t wake_file::generation(std::string_view name) const noexcept {
  return shared(at(name).generation).load();
}

void wake_file::post(std::string_view name, std::string_view owner, std::int64_t ticket,
                     std::int64_t fence) noexcept {
  std::uint64_t hash = 0;
  auto& s = at(name, &hash);
  if (!owner.empty() && owner.size() <= max_owner) {
    auto seq = shared(s.seq);
    std::uint32_t q = seq.load(std::memory_order_relaxed);
    // Another release of the slot writing its record (or one that died writing): this one
    // writes none after a short spin; its waiter then reads its grant.
    for (int i = 0; i < 64; ++i) {
      if ((q & 1) == 0 && seq.compare_exchange_weak(q, q + 1, std::memory_order_acquire)) {
        std::atomic_thread_fence(std::memory_order_release);  // the odd seq before the fields
        shared(s.name_hash).store(hash, std::memory_order_relaxed);
        shared(s.ticket).store(ticket, std::memory_order_relaxed);
        shared(s.fence).store(fence, std::memory_order_relaxed);
        shared(s.owner_len).store(static_cast<std::uint32_t>(owner.size()), std::memory_order_relaxed);
        for (std::size_t w = 0; w < max_owner / 8; ++w) {
          std::uint64_t word = 0;
          if (w * 8 < owner.size()) std::memcpy(&word, owner.data() + w * 8, std::min<std::size_t>(8, owner.size() - w * 8));
          shared(s.owner[w]).store(word, std::memory_order_relaxed);
        }
        seq.store(q + 2, std::memory_order_release);
        break;
      }
      q = seq.load(std::memory_order_relaxed);
    }
  }
  shared(s.generation).fetch_add(1);  // seq_cst: before the sleepers read
  if (shared(s.sleepers).load() > 0)
    (void)futex(&s.generation, FUTEX_WAKE_BITSET, INT_MAX, nullptr,
                owner.empty() ? FUTEX_BITSET_MATCH_ANY : ticket_bit(ticket));
}

bool wake_file::wait(std::string_view name, std::uint32_t seen, clock::time_point until,
                     std::int64_t ticket) const noexcept {
  auto& s = at(name);
  auto gen = shared(s.generation);
  const auto mask = ticket_bit(ticket);
  shared(s.sleepers).fetch_add(1);  // seq_cst: before the generation is read (post() reads it after its bump)
  bool changed = false;
  for (;;) {
    // Woken, or the word moved before the sleep began (then by any post: look again).
    const std::uint32_t now_gen = gen.load();
    if (now_gen != seen) {
      changed = true;
      break;
    }
    const auto left = until - clock::now();
    if (left <= clock::duration::zero()) break;
    // FUTEX_WAIT_BITSET takes an absolute CLOCK_MONOTONIC time.
    timespec t{};
    ::clock_gettime(CLOCK_MONOTONIC, &t);
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(left).count() + t.tv_nsec;
    t.tv_sec += static_cast<time_t>(ns / 1'000'000'000);
    t.tv_nsec = static_cast<long>(ns % 1'000'000'000);
    // Returns at once when the word is no longer `seen`; EINTR and spurious wake-ups loop.
    (void)futex(&s.generation, FUTEX_WAIT_BITSET, seen, &t, mask);
  }
  shared(s.sleepers).fetch_sub(1);
  return changed;
}

std::optional<std::int64_t> wake_file::handed(std::string_view name, std::string_view owner,
                                              std::int64_t ticket) const noexcept {
  if (owner.empty() || owner.size() > max_owner) return std::nullopt;
  std::uint64_t hash = 0;
  auto& s = at(name, &hash);
  const std::uint32_t q = shared(s.seq).load(std::memory_order_acquire);
  if (q & 1) return std::nullopt;
  const auto h = shared(s.name_hash).load(std::memory_order_relaxed);
  const auto t = shared(s.ticket).load(std::memory_order_relaxed);
  const auto f = shared(s.fence).load(std::memory_order_relaxed);
  const auto len = shared(s.owner_len).load(std::memory_order_relaxed);
  char o[max_owner];
  for (std::size_t w = 0; w < max_owner / 8; ++w) {
    const auto word = shared(s.owner[w]).load(std::memory_order_relaxed);
    std::memcpy(o + w * 8, &word, 8);
  }
  std::atomic_thread_fence(std::memory_order_acquire);  // the fields before the second seq read
  if (shared(s.seq).load(std::memory_order_relaxed) != q) return std::nullopt;  // torn: rewritten meanwhile
  if (h != hash || t != ticket || f <= 0 || len != owner.size() || std::memcmp(o, owner.data(), len) != 0)
    return std::nullopt;
  return f;
}

}  // namespace dblock::detail
