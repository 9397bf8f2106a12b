// tests/support/relay.cpp — dblock_test_relay: a pausable TCP relay between the tests and a
// database server, to make the network fail on command (a silent partition, lost replies,
// reset connections) without touching the server. Driven through stdin/stdout by
// tests/support/relay.hpp; plain POSIX, one thread, one poll() loop, never blocks on a peer.
//
//   dblock_test_relay --target HOST:PORT [--listen HOST:PORT]     (listen: 127.0.0.1:0)
//     prints "port=N", then reads commands, one per line, each answered "ok" once in effect:
//       pause          forward nothing either way; bytes stay where they are, sockets stay open
//       pause-replies  forward client->server only; server->client is held
//       resume         forward everything again, held bytes included
//       drop           reset (RST) every current connection pair, keep listening
//       count          "connections N" (open pairs), then "ok"
//       quit           exit 0 (so does EOF on stdin)
//     SIGUSR1 = pause, SIGUSR2 = resume (for shells).
//
// Hidden child modes used as the command under `dblock exec` (no shell involved):
//   dblock_test_relay --tick FILE [--once] [--sleep-ms N]
//     appends "pid=<pid>" then one CLOCK_REALTIME timestamp in ns per ms to FILE, each a
//     single O_APPEND write of a fixed-size line; --once: one timestamp, exit 0;
//     --sleep-ms N: stop after N ms, exit 0.
//   dblock_test_relay --sleep-ms N      sleep N ms, exit 0.
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <cstring>
#include <list>
#include <string>
#include <vector>

namespace {

constexpr std::size_t buffer_cap = 1 << 20;  // per direction: stop reading a side when full

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "dblock_test_relay: %s\n", what.c_str());
  std::exit(2);
}

// ------------------------------------------------------------------ child modes

long long now_ns(clockid_t clock) {
  timespec ts{};
  ::clock_gettime(clock, &ts);
  return static_cast<long long>(ts.tv_sec) * 1'000'000'000LL + ts.tv_nsec;
}

void sleep_ns(long long ns) {
  timespec ts{static_cast<time_t>(ns / 1'000'000'000LL), static_cast<long>(ns % 1'000'000'000LL)};
  while (::clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR) {
  }
}

void write_line(int fd, const char* line, std::size_t n) {
  // One write per line: O_APPEND makes it land whole at the end, never interleaved.
  if (::write(fd, line, n) != static_cast<ssize_t>(n)) die("tick file write failed");
}

int run_ticker(const char* file, bool once, long long sleep_ms) {
  // dblock exec must be able to stop this child: default SIGTERM/SIGINT, unblocked.
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::signal(SIGTERM, SIG_DFL);
  ::signal(SIGINT, SIG_DFL);

  int fd = -1;
  if (file) {
    fd = ::open(file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) die(std::string("cannot open ") + file + ": " + std::strerror(errno));
    char line[32];
    int n = std::snprintf(line, sizeof line, "pid=%d\n", static_cast<int>(::getpid()));
    write_line(fd, line, static_cast<std::size_t>(n));
  }
  const long long start = now_ns(CLOCK_MONOTONIC);
  for (;;) {
    if (fd >= 0) {
      char line[32];
      // 19 digits + '\n': every timestamp line has the same size.
      int n = std::snprintf(line, sizeof line, "%019lld\n", now_ns(CLOCK_REALTIME));
      write_line(fd, line, static_cast<std::size_t>(n));
      if (once) return 0;
    }
    if (sleep_ms >= 0 && now_ns(CLOCK_MONOTONIC) - start >= sleep_ms * 1'000'000LL) return 0;
    sleep_ns(fd >= 0 ? 1'000'000LL : sleep_ms * 1'000'000LL);
  }
}

// ------------------------------------------------------------------ addresses

struct host_port {
  std::string host, port;
};

host_port split_host_port(const std::string& s) {
  auto colon = s.rfind(':');
  if (colon == std::string::npos || colon + 1 == s.size()) die("expected HOST:PORT, got '" + s + "'");
  std::string host = s.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  return {host, s.substr(colon + 1)};
}

addrinfo* resolve(const host_port& hp, bool passive) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  if (passive) hints.ai_flags = AI_PASSIVE;
  addrinfo* res = nullptr;
  int rc = ::getaddrinfo(hp.host.empty() ? nullptr : hp.host.c_str(), hp.port.c_str(), &hints, &res);
  if (rc != 0) die("cannot resolve " + hp.host + ":" + hp.port + ": " + ::gai_strerror(rc));
  return res;
}

void set_nonblocking(int fd) {
  int fl = ::fcntl(fd, F_GETFL);
  if (fl < 0 || ::fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0) die("fcntl O_NONBLOCK failed");
}

// Closes with RST instead of FIN: what a crashed peer or a middlebox reset looks like.
void close_abruptly(int fd) {
  if (fd < 0) return;
  linger l{1, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
  ::close(fd);
}

// ------------------------------------------------------------------ the relay

enum class mode { forward, paused, replies_held };

// Bytes read from one side, not yet written to the other.
struct pipe_buffer {
  std::string data;
  std::size_t head = 0;
  bool eof = false;       // the source side sent FIN
  bool shut = false;      // FIN passed on to the destination
  [[nodiscard]] std::size_t size() const { return data.size() - head; }
  [[nodiscard]] bool full() const { return size() >= buffer_cap; }
  void consume(std::size_t n) {
    head += n;
    if (head == data.size()) {
      data.clear();
      head = 0;
    } else if (head > buffer_cap) {
      data.erase(0, head);
      head = 0;
    }
  }
};

struct pair {
  int client = -1;
  int server = -1;  // -1: not connected to the target yet (accepted while paused)
  bool connecting = false;
  pipe_buffer up;    // client -> server
  pipe_buffer down;  // server -> client
  bool dead = false;
  // A socket failed while forwarding was (partly) held: the reset is held back too, and
  // passed on by resume.
  bool frozen = false;
};

class relay {
 public:
  relay(addrinfo* target, int listen_fd) : target_(target), listen_fd_(listen_fd) {}

  void run();

 private:
  void on_command(const std::string& line, bool from_signal = false);
  void answer(const std::string& text);
  void accept_all();
  void start_connect(pair& p);
  void finish_connect(pair& p);
  void pump(pair& p, short client_ev, short server_ev);
  static bool transfer(int from, int to, pipe_buffer& buf, bool may_read, bool may_write, short from_ev,
                       short to_ev);
  static void reset(pair& p);
  void reap();
  [[nodiscard]] bool may_up() const { return mode_ != mode::paused; }
  [[nodiscard]] bool may_down() const { return mode_ == mode::forward; }

  addrinfo* target_;
  int listen_fd_;
  int signal_pipe_[2] = {-1, -1};
  std::list<pair> pairs_;
  mode mode_ = mode::forward;
  std::string stdin_buf_;
  bool quit_ = false;
};

int self_pipe_write = -1;

void on_signal(int sig) {
  int saved = errno;
  char c = static_cast<char>(sig);
  (void)!::write(self_pipe_write, &c, 1);
  errno = saved;
}

void relay::answer(const std::string& text) {
  std::string s = text + "\n";
  std::size_t off = 0;
  while (off < s.size()) {
    ssize_t n = ::write(1, s.data() + off, s.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      quit_ = true;  // nobody listens any more
      return;
    }
    off += static_cast<std::size_t>(n);
  }
}

void relay::on_command(const std::string& raw, bool from_signal) {
  std::string line = raw;
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  if (line.empty()) return;
  if (line == "pause") {
    mode_ = mode::paused;
  } else if (line == "pause-replies") {
    mode_ = mode::replies_held;
    for (auto& p : pairs_)
      if (!p.dead && p.server < 0) start_connect(p);
  } else if (line == "resume") {
    mode_ = mode::forward;
    for (auto& p : pairs_) {
      if (p.frozen) reset(p);
      else if (!p.dead && p.server < 0) start_connect(p);
    }
    reap();
  } else if (line == "drop") {
    for (auto& p : pairs_) reset(p);
    reap();
  } else if (line == "count") {
    reap();
    answer("connections " + std::to_string(pairs_.size()));
  } else if (line == "quit") {
    answer("ok");
    quit_ = true;
    return;
  } else {
    answer("error unknown command '" + line + "'");
    return;
  }
  if (!from_signal) answer("ok");  // a signal has no one reading the answer
}

void relay::reset(pair& p) {
  close_abruptly(p.client);
  close_abruptly(p.server);
  p.client = p.server = -1;
  p.dead = true;
}

void relay::accept_all() {
  for (;;) {
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      return;  // EAGAIN, or out of descriptors: try again on the next readiness
    }
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    pairs_.emplace_back();
    pairs_.back().client = fd;
    // While paused, nothing reaches the target, not even a connection attempt.
    if (mode_ != mode::paused) start_connect(pairs_.back());
  }
}

void relay::start_connect(pair& p) {
  for (addrinfo* a = target_; a; a = a->ai_next) {
    int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
      p.server = fd;
      p.connecting = false;
      return;
    }
    if (errno == EINPROGRESS) {
      p.server = fd;
      p.connecting = true;
      return;
    }
    ::close(fd);
  }
  reset(p);  // the target refuses: the client sees a reset, as it would connecting directly
}

void relay::finish_connect(pair& p) {
  int err = 0;
  socklen_t len = sizeof err;
  if (::getsockopt(p.server, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
  if (err == 0) {
    p.connecting = false;
    return;
  }
  reset(p);
}

// Moves bytes from -> buf -> to as far as the mode allows. Returns false when the pair
// must be reset (an error on either socket).
bool relay::transfer(int from, int to, pipe_buffer& buf, bool may_read, bool may_write, short from_ev,
                     short to_ev) {
  if (may_read && !buf.eof && !buf.full() && (from_ev & (POLLIN | POLLHUP | POLLERR))) {
    char chunk[65536];
    std::size_t room = buffer_cap - buf.size();
    ssize_t n = ::recv(from, chunk, std::min(room, sizeof chunk), 0);
    if (n > 0) buf.data.append(chunk, static_cast<std::size_t>(n));
    else if (n == 0) buf.eof = true;
    else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return false;
  }
  if (may_write && buf.size() > 0 && (to_ev & (POLLOUT | POLLERR | POLLHUP))) {
    ssize_t n = ::send(to, buf.data.data() + buf.head, buf.size(), MSG_NOSIGNAL);
    if (n > 0) buf.consume(static_cast<std::size_t>(n));
    else if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return false;
  }
  if (may_write && buf.eof && buf.size() == 0 && !buf.shut) {
    ::shutdown(to, SHUT_WR);  // pass the FIN on once everything before it went through
    buf.shut = true;
  }
  return true;
}

void relay::pump(pair& p, short client_ev, short server_ev) {
  if (p.dead || p.frozen) return;
  if (p.server >= 0 && p.connecting) {
    if (!(server_ev & (POLLOUT | POLLERR | POLLHUP))) return;
    finish_connect(p);
    if (p.dead || p.connecting) return;
    server_ev = POLLOUT;  // just connected: writable, nothing read yet
  }
  if (p.server < 0) return;
  bool ok = transfer(p.client, p.server, p.up, may_up(), may_up(), client_ev, server_ev) &&
            transfer(p.server, p.client, p.down, may_down(), may_down(), server_ev, client_ev);
  if (!ok) {
    if (mode_ == mode::forward) reset(p);
    else p.frozen = true;
    return;
  }
  if (p.up.shut && p.down.shut) {
    ::close(p.client);
    ::close(p.server);
    p.client = p.server = -1;
    p.dead = true;
  }
}

void relay::reap() {
  for (auto it = pairs_.begin(); it != pairs_.end();) {
    if (it->dead) it = pairs_.erase(it);
    else ++it;
  }
}

void relay::run() {
  if (::pipe2(signal_pipe_, O_NONBLOCK | O_CLOEXEC) != 0) die("pipe2 failed");
  self_pipe_write = signal_pipe_[1];
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  ::sigaction(SIGUSR1, &sa, nullptr);
  ::sigaction(SIGUSR2, &sa, nullptr);

  std::vector<pollfd> fds;
  std::vector<pair*> owners;  // owners[i]: the pair of fds[i], or nullptr
  while (!quit_) {
    fds.clear();
    owners.clear();
    fds.push_back({0, POLLIN, 0});
    fds.push_back({signal_pipe_[0], POLLIN, 0});
    fds.push_back({listen_fd_, POLLIN, 0});
    owners.assign(3, nullptr);
    for (auto& p : pairs_) {
      if (p.dead) continue;
      // An fd with nothing to do is left out of poll (fd -1): a peer's FIN or RST on a held
      // side must neither wake the loop forever nor be acted on before the relay resumes.
      short cev = 0, sev = 0;
      bool up = may_up(), down = may_down();
      if (p.frozen || p.server < 0) {
        // held until resume
      } else if (p.connecting) {
        sev = POLLOUT;
      } else {
        if (up && !p.up.eof && !p.up.full()) cev |= POLLIN;
        if (up && p.up.size() > 0) sev |= POLLOUT;
        if (down && !p.down.eof && !p.down.full()) sev |= POLLIN;
        if (down && p.down.size() > 0) cev |= POLLOUT;
      }
      fds.push_back({cev != 0 ? p.client : -1, cev, 0});
      owners.push_back(&p);
      fds.push_back({sev != 0 ? p.server : -1, sev, 0});
      owners.push_back(&p);
    }
    int n = ::poll(fds.data(), fds.size(), -1);
    if (n < 0) {
      if (errno == EINTR) continue;
      die(std::string("poll failed: ") + std::strerror(errno));
    }
    // Traffic first, commands after: a command may free pairs that owners[] points to.
    for (std::size_t i = 3; i + 1 < fds.size(); i += 2) pump(*owners[i], fds[i].revents, fds[i + 1].revents);
    reap();
    if (fds[1].revents) {
      char sigs[64];
      ssize_t k = ::read(signal_pipe_[0], sigs, sizeof sigs);
      for (ssize_t i = 0; i < k; ++i) on_command(sigs[i] == SIGUSR1 ? "pause" : "resume", true);
    }
    if (fds[2].revents & POLLIN) accept_all();
    if (fds[0].revents) {
      char chunk[4096];
      ssize_t k = ::read(0, chunk, sizeof chunk);
      if (k <= 0) {
        if (k < 0 && errno == EINTR) continue;
        break;  // EOF on stdin: the driver is gone
      }
      stdin_buf_.append(chunk, static_cast<std::size_t>(k));
      for (auto nl = stdin_buf_.find('\n'); nl != std::string::npos && !quit_; nl = stdin_buf_.find('\n')) {
        std::string line = stdin_buf_.substr(0, nl);
        stdin_buf_.erase(0, nl + 1);
        on_command(line);
      }
    }
  }
}

int run_relay(const std::string& target, const std::string& listen) {
  ::signal(SIGPIPE, SIG_IGN);
  addrinfo* target_ai = resolve(split_host_port(target), false);
  addrinfo* listen_ai = resolve(split_host_port(listen), true);
  int lfd = -1;
  for (addrinfo* a = listen_ai; a && lfd < 0; a = a->ai_next) {
    int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, 128) == 0) lfd = fd;
    else ::close(fd);
  }
  ::freeaddrinfo(listen_ai);
  if (lfd < 0) die("cannot listen on " + listen + ": " + std::strerror(errno));
  set_nonblocking(lfd);

  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (::getsockname(lfd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) die("getsockname failed");
  int port = ss.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port)
                                      : ntohs(reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
  std::printf("port=%d\n", port);
  std::fflush(stdout);

  relay r(target_ai, lfd);
  r.run();
  return 0;
}

void usage() {
  std::fprintf(stderr,
               "usage: dblock_test_relay --target HOST:PORT [--listen HOST:PORT]\n"
               "       dblock_test_relay --tick FILE [--once] [--sleep-ms N]\n"
               "       dblock_test_relay --sleep-ms N\n");
  std::exit(64);
}

}  // namespace

int main(int argc, char** argv) {
  std::string target, listen = "127.0.0.1:0";
  const char* tick = nullptr;
  bool once = false;
  long long sleep_ms = -1;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) usage();
      return argv[++i];
    };
    if (a == "--target") target = value();
    else if (a == "--listen") listen = value();
    else if (a == "--tick") tick = value();
    else if (a == "--once") once = true;
    else if (a == "--sleep-ms") {
      char* end = nullptr;
      const char* v = value();
      sleep_ms = std::strtoll(v, &end, 10);
      if (!*v || *end || sleep_ms < 0) usage();
    } else usage();
  }
  if (tick || sleep_ms >= 0) {
    if (!target.empty()) usage();
    return run_ticker(tick, once, sleep_ms);
  }
  if (target.empty()) usage();
  return run_relay(target, listen);
}
