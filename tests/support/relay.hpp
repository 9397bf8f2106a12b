// tests/support/relay.hpp — drives dblock_test_relay (tests/support/relay.cpp), a TCP relay
// between a client and a database server that cuts the network on command:
//
//   dblock::test::relay r(dblock::test::relay::target_of(url));   // host:port of the server
//   auto through = r.url_through(url);   // the same URL, to 127.0.0.1:<relay port>
//   ... clients connect with `through` ...
//   r.pause();            // silent network: nothing forwarded, nothing closed
//   r.pause_replies();    // requests still go through, answers are held
//   r.resume();           // everything flows again, held bytes included
//   r.drop();             // every connection pair reset (RST)
//   r.connections();      // open connection pairs
//
// Each call returns once the relay confirmed it took effect. Every wait is bounded; the
// destructor sends quit and reaps the process (SIGKILL after 2 s).
#pragma once

#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace dblock::test {

class relay {
 public:
  // Starts the relay to `target` ("host:port"); `program` is the dblock_test_relay binary.
#ifdef DBLOCK_RELAY
  explicit relay(const std::string& target, std::string program = DBLOCK_RELAY) { start(target, program); }
#else
  relay(const std::string& target, std::string program) { start(target, program); }
#endif
  ~relay() { stop(); }
  relay(const relay&) = delete;
  relay& operator=(const relay&) = delete;

  [[nodiscard]] int port() const noexcept { return port_; }
  [[nodiscard]] pid_t pid() const noexcept { return pid_; }

  void pause() { command("pause"); }
  void pause_replies() { command("pause-replies"); }
  void resume() { command("resume"); }
  void drop() { command("drop"); }
  int connections() {
    send_line("count");
    const std::string line = read_line();
    if (line.rfind("connections ", 0) != 0) throw std::runtime_error("relay: unexpected answer '" + line + "'");
    expect_ok("count");
    return std::stoi(line.substr(12));
  }

  // "host:port" of a postgresql:// or mysql:// URL (scheme://[user[:pass]@]host[:port]/db?opts);
  // without a port, the scheme's default (5432, 3306).
  static std::string target_of(const std::string& url) {
    const auto [begin, end] = authority_host(url);
    std::string hp = url.substr(begin, end - begin);
    const bool bracketed = !hp.empty() && hp.front() == '[';
    const auto colon = hp.rfind(':');
    const bool has_port = colon != std::string::npos && (!bracketed || colon > hp.find(']'));
    if (has_port) return hp;
    return hp + (url.find("postgres") == 0 || url.find("soci+postgres") == 0 ? ":5432" : ":3306");
  }

  // The same URL with its host:port replaced by 127.0.0.1:<relay port>.
  [[nodiscard]] std::string url_through(const std::string& url) const {
    const auto [begin, end] = authority_host(url);
    return url.substr(0, begin) + "127.0.0.1:" + std::to_string(port_) + url.substr(end);
  }

 private:
  // [begin, end) of "host[:port]" in a URL: after "://" and the last '@' of the authority,
  // up to the first '/' or '?'.
  static std::pair<std::size_t, std::size_t> authority_host(const std::string& url) {
    const auto sep = url.find("://");
    if (sep == std::string::npos) throw std::invalid_argument("relay: not a server URL");
    const std::size_t start = sep + 3;
    std::size_t end = url.find_first_of("/?", start);
    if (end == std::string::npos) end = url.size();
    const auto at = url.rfind('@', end == 0 ? 0 : end - 1);
    const std::size_t begin = (at != std::string::npos && at >= start) ? at + 1 : start;
    return {begin, end};
  }

  void start(const std::string& target, const std::string& program) {
    // One socketpair as the relay's stdin and stdout: the test's writes then use
    // send(MSG_NOSIGNAL), so a dead relay is an exception here, not a SIGPIPE.
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) throw std::runtime_error("socketpair failed");
    std::vector<std::string> args = {program, "--target", target};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_ = ::fork();
    if (pid_ < 0) {
      ::close(sv[0]);
      ::close(sv[1]);
      throw std::runtime_error("fork failed");
    }
    if (pid_ == 0) {
      ::dup2(sv[1], 0);
      ::dup2(sv[1], 1);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    ::close(sv[1]);
    fd_ = sv[0];
    const std::string first = read_line();
    if (first.rfind("port=", 0) != 0) {
      stop();
      throw std::runtime_error("relay: did not start (" + first + ")");
    }
    port_ = std::stoi(first.substr(5));
  }

  void stop() noexcept {
    if (fd_ >= 0) {
      const char quit[] = "quit\n";
      (void)::send(fd_, quit, sizeof quit - 1, MSG_NOSIGNAL);
      ::shutdown(fd_, SHUT_WR);  // EOF on its stdin is quit as well
    }
    if (pid_ > 0) {
      int st = 0;
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
      while (::waitpid(pid_, &st, WNOHANG) == 0) {
        if (std::chrono::steady_clock::now() >= deadline) {
          ::kill(pid_, SIGKILL);
          ::waitpid(pid_, &st, 0);
          break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));  // polling an exit, not a timing claim
      }
      pid_ = -1;
    }
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

  void command(const std::string& c) {
    send_line(c);
    expect_ok(c);
  }

  void expect_ok(const std::string& c) {
    const std::string line = read_line();
    if (line != "ok") throw std::runtime_error("relay: '" + c + "' answered '" + line + "'");
  }

  void send_line(const std::string& c) {
    const std::string s = c + "\n";
    std::size_t off = 0;
    while (off < s.size()) {
      ssize_t n = ::send(fd_, s.data() + off, s.size() - off, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) throw std::runtime_error("relay: cannot send '" + c + "' (relay gone)");
      off += static_cast<std::size_t>(n);
    }
  }

  // One answer line, waiting at most 10 s for it.
  std::string read_line() {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    for (;;) {
      const auto nl = pending_.find('\n');
      if (nl != std::string::npos) {
        std::string line = pending_.substr(0, nl);
        pending_.erase(0, nl + 1);
        return line;
      }
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
      if (left <= 0) throw std::runtime_error("relay: no answer within 10 s");
      pollfd p{fd_, POLLIN, 0};
      int r = ::poll(&p, 1, static_cast<int>(left));
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) continue;
      char buf[256];
      ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) throw std::runtime_error("relay: exited (no answer)");
      pending_.append(buf, static_cast<std::size_t>(n));
    }
  }

  pid_t pid_ = -1;
  int fd_ = -1;
  int port_ = 0;
  std::string pending_;
};

}  // namespace dblock::test
