// Scenario tests for the Raft core: small text files (testdata/*.scn) that
// drive a Cluster step by step and state what must hold. One command per
// line; `#` starts a comment; times are in milliseconds of simulated real
// time; nodes are 1..N. Messages have no delay: they wait in the network
// until a `deliver` or `run` moves them.
//
// Setup (before `nodes`):
//   set KEY VALUE     election-ms, heartbeat-ms, follower-lease-ms,
//                     guard-ms, pre-vote on|off, check-quorum on|off,
//                     read-mode readindex|lease|follower-lease, unsafe NAME,
//                     max-append N, snapshot-every N, chunk-bytes N, seed N
//                     (defaults: election 100, heartbeat 10, follower lease
//                     60, guard 2; the rest as in raft::Config)
//   nodes N           start N fresh nodes (all clocks at rate 1)
//   allow KIND        a violation of KIND does not fail the scenario (check
//                     it with `expect violation KIND`)
//   trace on|off      print the cluster's events to stderr
// Time and messages:
//   tick MS [on N..]  advance MS, 1 ms at a time, ticking only the listed
//                     nodes (default: every running node); nothing delivered
//   campaign N        tick only N, 1 ms at a time, until it starts a new
//                     campaign (sends PreVote/Vote requests) or leads (at
//                     most 20 election timeouts)
//   deliver [LINK] [TYPE] [max K]
//                     deliver queued messages matching LINK (A->B, A->*,
//                     *->B) and TYPE (e.g. Vote, AppendResp; any case),
//                     including ones that delivering produces, until none
//                     match (or K were delivered)
//   drop [LINK] [TYPE]  discard matching queued messages
//   run MS            advance MS, each ms ticking every running node and
//                     delivering every message
//   hold A->B         keep messages on the link queued (delayed): only a
//                     `deliver A->B ...` naming the link moves them
//   release A->B      end the hold
//   run until leader [N] [within MS]   run until N (or any node) leads
// Faults:
//   partition A B | C ...   cut links between groups (unlisted: isolated)
//   isolate N / cut A->B / heal
//   crash N / restart N     (restart: from the node's disk only)
//   skew N RATE             N's clock runs at RATE x real time
// Clients:
//   propose N KEY VALUE [fails]   a put on N; must be accepted (refused)
//   read N KEY [local]            linearizable read (local: follower lease
//                                 first); served later, checked always
//   transfer N TO                 leadership transfer, must start
//   compact N                     compact N's log at its applied index
// Expectations:
//   expect leader N [term T]     expect not-leader N     expect no-leader
//   expect role N ROLE           expect term N T         expect vote N V
//   expect term-above N T
//   expect commit N I            expect applied N I      expect last N I
//   expect snapshot N I          (N's snapshot index >= I)
//   expect value N KEY VALUE|nil (N's state machine)
//   expect served N KEY VALUE|nil (the newest read of KEY served on N since
//                                the last `expect served N`)
//   expect not-served N          (no read served on N since then)
//   expect unserved N            (some read is still pending)
//   expect failed-reads K        (K reads failed so far, e.g. leader lost)
//   expect lease N valid|invalid (N's follower read lease)
//   expect violation KIND        expect ok (no violation so far)
//
// Thread-safety: none.
#pragma once

#include <string>

namespace faultline::raftkv::raft::sim {

struct ScenarioResult {
  bool ok = true;
  std::string error;  // "name:line: `command`: what went wrong"
  int commands = 0;   // commands executed
};

ScenarioResult RunScenario(const std::string& name, const std::string& text);
ScenarioResult RunScenarioFile(const std::string& path);

}  // namespace faultline::raftkv::raft::sim
