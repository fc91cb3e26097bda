// faultline-netdelay: delays the packets an iptables NFQUEUE rule hands to
// one queue, then accepts them (nemesis/net/delay.h, docs/faults.md "delay").
// Runs inside the network namespace whose INPUT rules use the queue
// (NFQUEUE is per namespace). Exit codes: 0 after SIGTERM/SIGINT (every
// held packet accepted first), 1 on a runtime error, 254 on bad usage.
#include <arpa/inet.h>
#include <errno.h>
#include <linux/netfilter.h>
#include <linux/netlink.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

extern "C" {
#include <libnetfilter_queue/libnetfilter_queue.h>
}

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "nemesis/net/delay.h"

namespace {

using faultline::nemesis::DelayLine;

std::int64_t NowMs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

struct Daemon {
  nfq_q_handle* qh = nullptr;
  DelayLine* line = nullptr;
  std::uint64_t received = 0;
  std::uint64_t accepted = 0;
  bool verdict_error = false;
};

int OnPacket(nfq_q_handle* /*qh*/, nfgenmsg* /*msg*/, nfq_data* nfa,
             void* data) {
  auto* d = static_cast<Daemon*>(data);
  nfqnl_msg_packet_hdr* ph = nfq_get_msg_packet_hdr(nfa);
  if (ph == nullptr) return 0;
  d->line->Push(ntohl(ph->packet_id), NowMs());
  ++d->received;
  return 0;
}

void Accept(Daemon& d, const std::vector<std::uint32_t>& ids) {
  for (std::uint32_t id : ids) {
    if (nfq_set_verdict(d.qh, id, NF_ACCEPT, 0, nullptr) < 0 &&
        !d.verdict_error) {
      std::fprintf(stderr, "faultline-netdelay: verdict for packet %u: %s\n",
                   id, std::strerror(errno));
      d.verdict_error = true;  // reported once; the kernel may have gone
    } else {
      ++d.accepted;
    }
  }
}

int Fatal(const char* what) {
  std::fprintf(stderr, "faultline-netdelay: %s: %s\n", what,
               std::strerror(errno));
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  auto parsed = faultline::nemesis::ParseNetdelayArgs(args);
  if (!parsed.ok()) {
    // One line: the nemesis quotes the last line of the log in its error.
    std::fprintf(stderr, "faultline-netdelay: %s (see --help)\n",
                 parsed.error().c_str());
    return 254;
  }
  const auto opts = *parsed;
  if (opts.help) {
    std::fputs(faultline::nemesis::NetdelayUsage().c_str(), stdout);
    return 0;
  }

  sigset_t mask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGTERM);
  sigaddset(&mask, SIGINT);
  if (sigprocmask(SIG_BLOCK, &mask, nullptr) != 0) return Fatal("sigprocmask");
  int sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
  if (sfd < 0) return Fatal("signalfd");

  nfq_handle* h = nfq_open();
  if (h == nullptr) return Fatal("nfq_open (needs root / CAP_NET_ADMIN)");
  DelayLine line(opts.delay_ms, opts.jitter_ms, opts.seed);
  Daemon d;
  d.line = &line;
  d.qh = nfq_create_queue(h, static_cast<std::uint16_t>(opts.queue), &OnPacket,
                          &d);
  if (d.qh == nullptr) {
    std::fprintf(stderr,
                 "faultline-netdelay: cannot bind NFQUEUE %d (in use, or no "
                 "nfnetlink_queue support)\n",
                 opts.queue);
    nfq_close(h);
    return 1;
  }
  // Metadata only: the verdict needs the packet id, never the payload.
  if (nfq_set_mode(d.qh, NFQNL_COPY_META, 0) < 0) return Fatal("set_mode");
  if (nfq_set_queue_maxlen(d.qh, 65536) < 0) return Fatal("set_queue_maxlen");
  // A full queue accepts instead of dropping; GSO packets stay whole.
  std::uint32_t flags = NFQA_CFG_F_FAIL_OPEN | NFQA_CFG_F_GSO;
  if (nfq_set_queue_flags(d.qh, flags, flags) < 0)
    std::fprintf(stderr, "faultline-netdelay: queue flags not supported\n");
  nfnl_rcvbufsiz(nfq_nfnlh(h), 16u << 20);
  const int fd = nfq_fd(h);
  int one = 1;
  setsockopt(fd, SOL_NETLINK, NETLINK_NO_ENOBUFS, &one, sizeof one);

  std::fprintf(stderr,
               "faultline-netdelay: queue %d bound, delay %d ms, jitter %d "
               "ms\n",
               opts.queue, opts.delay_ms, opts.jitter_ms);

  std::vector<char> buf(1 << 16);
  int exit_code = 0;
  for (;;) {
    int timeout = -1;
    if (auto next = line.NextRelease()) {
      std::int64_t wait = *next - NowMs();
      timeout = wait < 0 ? 0 : static_cast<int>(wait);
    }
    pollfd fds[2] = {{fd, POLLIN, 0}, {sfd, POLLIN, 0}};
    int n = poll(fds, 2, timeout);
    if (n < 0 && errno != EINTR) {
      exit_code = Fatal("poll");
      break;
    }
    if (n > 0 && (fds[1].revents & POLLIN)) {
      signalfd_siginfo si{};
      (void)!read(sfd, &si, sizeof si);
      break;
    }
    if (n > 0 && (fds[0].revents & POLLIN)) {
      for (;;) {
        ssize_t len = recv(fd, buf.data(), buf.size(), MSG_DONTWAIT);
        if (len < 0) {
          if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ||
              errno == ENOBUFS)
            break;
          exit_code = Fatal("recv");
          break;
        }
        nfq_handle_packet(h, buf.data(), static_cast<int>(len));
      }
      if (exit_code != 0) break;
    }
    Accept(d, line.PopDue(NowMs()));
  }
  Accept(d, line.PopAll());
  std::fprintf(stderr,
               "faultline-netdelay: exiting; %llu packets delayed, %llu "
               "accepted\n",
               static_cast<unsigned long long>(d.received),
               static_cast<unsigned long long>(d.accepted));
  nfq_destroy_queue(d.qh);
  nfq_close(h);
  close(sfd);
  return exit_code;
}
