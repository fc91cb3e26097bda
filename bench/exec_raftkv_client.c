/* A minimal faultline exec client (protocol 1, docs/exec-protocol.md) for
 * raftkv's register workload, in C, for bench/exec_client_bench.sh: it
 * measures what the exec protocol itself costs when the client is cheap.
 *
 * Same semantics as examples/clients/python/raftkv_client.py for read,
 * write and cas (GET / SET / CAS r/<key>, one -NOTLEADER redirect followed
 * and that connection kept, timeouts and lost connections after sending are
 * info, refusals are fail), with these limits, fine for the bench and not
 * meant for campaigns: keys must be integers, null or
 * strings without escapes or spaces, values are stored as
 * the JSON text faultline sent (it sends compact JSON), a stored value that
 * does not look like a JSON number, array or null is returned as a string,
 * and the lock workload is answered fail "unsupported f".
 *
 * Build: cc -O2 -o exec_raftkv_client bench/exec_raftkv_client.c
 * Usage: exec_raftkv_client [HOST PORT]; HOST and PORT default to
 * $FAULTLINE_NODE_IP and $FAULTLINE_PORT_CLIENT. Single-threaded.
 * exec_raftkv_client --memory answers GET, SET and CAS from a table in its
 * own memory instead (each process its own registers, so not a store to
 * check, only to time): the exec protocol's own ceiling, without raftkv. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

typedef struct {
  char host[64];
  int port;
  int fd;
  char buf[65536];
  size_t len;
} Conn;

enum {
  R_ERR_CONNECT,
  R_ERR_TIMEOUT,
  R_ERR_IO,
  R_SIMPLE,
  R_ERROR,
  R_INT,
  R_BULK,
  R_NIL
};

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void conn_close(Conn* c) {
  if (c->fd >= 0) close(c->fd);
  c->fd = -1;
  c->len = 0;
}

/* Waits until fd is ready for `events` or the deadline passes: 1 ready. */
static int wait_fd(int fd, short events, double deadline) {
  for (;;) {
    double left = deadline - now_ms();
    if (left <= 0) return 0;
    struct pollfd p = {fd, events, 0};
    int r = poll(&p, 1, (int)left + 1);
    if (r > 0) return 1;
    if (r < 0 && errno != EINTR) return 0;
  }
}

static int conn_open(Conn* c, double deadline) {
  struct sockaddr_in a;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_port = htons((unsigned short)c->port);
  if (inet_pton(AF_INET, c->host, &a.sin_addr) != 1) return 0;
  c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (c->fd < 0) return 0;
  int one = 1;
  setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (connect(c->fd, (struct sockaddr*)&a, sizeof a) == 0) return 1;
  if (errno != EINPROGRESS || !wait_fd(c->fd, POLLOUT, deadline)) {
    conn_close(c);
    return 0;
  }
  int err = 0;
  socklen_t n = sizeof err;
  getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &n);
  if (err != 0) conn_close(c);
  return err == 0;
}

/* Reads until buf holds a CRLF at or after `from`; returns its offset. */
static long need_line(Conn* c, size_t from, double deadline, int* kind) {
  for (;;) {
    for (size_t i = from; i + 1 < c->len; i++)
      if (c->buf[i] == '\r' && c->buf[i + 1] == '\n') return (long)i;
    if (c->len == sizeof c->buf) {
      *kind = R_ERR_IO;
      return -1;
    }
    if (!wait_fd(c->fd, POLLIN, deadline)) {
      *kind = R_ERR_TIMEOUT;
      return -1;
    }
    ssize_t r = read(c->fd, c->buf + c->len, sizeof c->buf - c->len);
    if (r > 0) {
      c->len += (size_t)r;
      continue;
    }
    if (r < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    *kind = R_ERR_IO;
    return -1;
  }
}

/* --memory: GET, SET and CAS on up to 64 keys in this process. */
static int memory_mode;
static struct {
  char key[64];
  char value[256];
} table[64];
static int table_size;

static int memory_call(int argc, const char** argv, char* out,
                       size_t out_size, long long* num) {
  int i = 0;
  while (i < table_size && strcmp(table[i].key, argv[1]) != 0) i++;
  int found = i < table_size;
  if (!strcmp(argv[0], "GET")) {
    if (!found) return R_NIL;
    snprintf(out, out_size, "%s", table[i].value);
    return R_BULK;
  }
  if (!found) {
    if (table_size == 64) return R_ERR_CONNECT;
    snprintf(table[table_size++].key, sizeof table[0].key, "%s", argv[1]);
    table[i].value[0] = 0;
  }
  if (!strcmp(argv[0], "SET")) {
    snprintf(table[i].value, sizeof table[i].value, "%s", argv[2]);
    snprintf(out, out_size, "OK");
    return R_SIMPLE;
  }
  /* CAS key old new */
  *num = argc == 4 && found && !strcmp(table[i].value, argv[2]);
  if (*num)
    snprintf(table[i].value, sizeof table[i].value, "%s", argv[3]);
  return R_INT;
}

/* Sends argv as a RESP array and reads one reply (no arrays). The reply's
 * text (simple, error, bulk) is copied into out. */
static int call(Conn* c, int argc, const char** argv, double deadline,
                char* out, size_t out_size, long long* num) {
  if (memory_mode) return memory_call(argc, argv, out, out_size, num);
  if (c->fd >= 0) { /* readable while idle: closed by the peer, or junk */
    struct pollfd p = {c->fd, POLLIN, 0};
    if (poll(&p, 1, 0) != 0) conn_close(c);
  }
  if (c->fd < 0 && !conn_open(c, deadline)) return R_ERR_CONNECT;
  char req[8192];
  int n = snprintf(req, sizeof req, "*%d\r\n", argc);
  for (int i = 0; i < argc && n < (int)sizeof req; i++)
    n += snprintf(req + n, sizeof req - n, "$%zu\r\n%s\r\n", strlen(argv[i]),
                  argv[i]);
  if (n >= (int)sizeof req) return R_ERR_CONNECT; /* nothing sent */
  for (int off = 0; off < n;) {
    ssize_t w = write(c->fd, req + off, (size_t)(n - off));
    if (w > 0) {
      off += (int)w;
      continue;
    }
    if (w < 0 && (errno == EAGAIN || errno == EINTR) &&
        wait_fd(c->fd, POLLOUT, deadline))
      continue;
    conn_close(c);
    return off == 0 ? R_ERR_CONNECT : R_ERR_IO;
  }
  int kind = R_ERR_IO;
  long eol = need_line(c, 0, deadline, &kind);
  if (eol < 0) {
    conn_close(c);
    return kind;
  }
  char t = c->buf[0];
  size_t body = (size_t)eol - 1, used = (size_t)eol + 2;
  int result;
  if (t == '+' || t == '-') {
    size_t m = body < out_size - 1 ? body : out_size - 1;
    memcpy(out, c->buf + 1, m);
    out[m] = 0;
    result = t == '+' ? R_SIMPLE : R_ERROR;
  } else if (t == ':') {
    *num = strtoll(c->buf + 1, NULL, 10);
    result = R_INT;
  } else if (t == '$') {
    long blen = strtol(c->buf + 1, NULL, 10);
    if (blen < 0) {
      result = R_NIL;
    } else {
      while (c->len < used + (size_t)blen + 2) {
        if (need_line(c, used + (size_t)blen, deadline, &kind) < 0) {
          conn_close(c);
          return kind;
        }
      }
      size_t m = (size_t)blen < out_size - 1 ? (size_t)blen : out_size - 1;
      memcpy(out, c->buf + used, m);
      out[m] = 0;
      used += (size_t)blen + 2;
      result = R_BULK;
    }
  } else {
    conn_close(c);
    return R_ERR_IO;
  }
  memmove(c->buf, c->buf + used, c->len - used);
  c->len -= used;
  return result;
}

/* The raw text of the JSON value of "name" in a one-line object, or NULL.
 * Only the top level is searched; *len gets the value's length. */
static const char* field(const char* obj, const char* name, size_t* len) {
  size_t nl = strlen(name);
  int depth = 0;
  for (const char* p = obj; *p; p++) {
    if (*p == '"') {
      const char* s = p + 1;
      const char* q = s;
      while (*q && *q != '"') q += (*q == '\\' && q[1]) ? 2 : 1;
      if (!*q) return NULL;
      const char* after = q + 1;
      while (*after == ' ') after++;
      if (depth == 1 && *after == ':' && (size_t)(q - s) == nl &&
          strncmp(s, name, nl) == 0) {
        const char* v = after + 1;
        while (*v == ' ') v++;
        const char* e = v;
        int d = 0;
        for (; *e; e++) {
          if (*e == '"') {
            e++;
            while (*e && *e != '"') e += (*e == '\\' && e[1]) ? 2 : 1;
            if (!*e) break;
            if (d == 0) {
              e++;
              break;
            }
            continue;
          }
          if (*e == '[' || *e == '{') d++;
          if (*e == ']' || *e == '}') {
            if (d == 0) break;
            if (--d == 0) {
              e++;
              break;
            }
          }
          if (d == 0 && *e == ',') break;
        }
        while (e > v && (e[-1] == ' ' || e[-1] == '\n')) e--;
        *len = (size_t)(e - v);
        return v;
      }
      p = q;
      continue;
    }
    if (*p == '{' || *p == '[') depth++;
    if (*p == '}' || *p == ']') depth--;
  }
  return NULL;
}

static int looks_like_json(const char* s) {
  if (!strcmp(s, "null") || s[0] == '[') return 1;
  char* end;
  strtod(s, &end);
  return *s && *end == 0;
}

static void answer(long long id, const char* type, const char* value_json,
                   const char* error) {
  if (value_json)
    printf("{\"type\":\"%s\",\"id\":%lld,\"value\":%s}\n", type, id,
           value_json);
  else if (error)
    printf("{\"type\":\"%s\",\"id\":%lld,\"error\":\"%s\"}\n", type, id, error);
  else
    printf("{\"type\":\"%s\",\"id\":%lld}\n", type, id);
  fflush(stdout);
}

int main(int argc, char** argv) {
  Conn own = {.fd = -1}, leader = {.fd = -1};
  if (argc == 2 && !strcmp(argv[1], "--memory")) {
    memory_mode = 1;
    argc = 1;
  }
  const char* host = argc == 3 ? argv[1] : getenv("FAULTLINE_NODE_IP");
  const char* port = argc == 3 ? argv[2] : getenv("FAULTLINE_PORT_CLIENT");
  snprintf(own.host, sizeof own.host, "%s", host ? host : "127.0.0.1");
  own.port = atoi(port ? port : "6379");
  char* line = NULL;
  size_t cap = 0;
  if (getline(&line, &cap, stdin) <= 0) return 0;
  printf("{\"type\":\"hello\",\"protocol\":1}\n");
  fflush(stdout);
  static char reply[65536], text[65540];
  while (getline(&line, &cap, stdin) > 0) {
    size_t n;
    const char* v = field(line, "type", &n);
    if (!v || strncmp(v, "\"invoke\"", n) != 0) continue;
    v = field(line, "id", &n);
    long long id = v ? strtoll(v, NULL, 10) : 0;
    v = field(line, "timeout_ms", &n);
    double deadline = now_ms() + (v ? strtod(v, NULL) : 2000);
    const char* f = field(line, "f", &n);
    size_t fl = n;
    const char* k = field(line, "key", &n);
    char key[64];
    if (k && n == 4 && !strncmp(k, "null", 4))
      snprintf(key, sizeof key, "r/_");
    else if (k && n > 0 && n < 30 &&
             (k[0] == '-' || (k[0] >= '0' && k[0] <= '9')))
      snprintf(key, sizeof key, "r/%.*s", (int)n, k);
    else if (k && n > 2 && n < 30 && k[0] == '"' && !memchr(k, '\\', n) &&
             !memchr(k + 1, ' ', n - 2))
      snprintf(key, sizeof key, "r/%.*s", (int)n - 2, k + 1);
    else {
      answer(id, "fail", NULL, "unsupported key");
      continue;
    }
    const char* val = field(line, "value", &n);
    size_t vl = n;
    int is_read = f && fl == 6 && !strncmp(f, "\"read\"", 6);
    int is_write = f && fl == 7 && !strncmp(f, "\"write\"", 7);
    int is_cas = f && fl == 5 && !strncmp(f, "\"cas\"", 5);
    long long num = 0;
    if (is_read) {
      const char* cmd[] = {"GET", key};
      int r = call(&own, 2, cmd, deadline, reply, sizeof reply, &num);
      if (r == R_NIL)
        answer(id, "ok", "null", NULL);
      else if (r == R_BULK && looks_like_json(reply))
        answer(id, "ok", reply, NULL);
      else if (r == R_BULK) {
        snprintf(text, sizeof text, "\"%s\"", reply);
        answer(id, "ok", text, NULL);
      } else if (r == R_ERR_TIMEOUT ||
                 (r == R_ERROR && !strncmp(reply, "TIMEOUT", 7)))
        answer(id, "info", NULL, "timeout");
      else
        answer(id, "fail", NULL, "read failed");
      continue;
    }
    if (!(is_write || is_cas) || !val) {
      answer(id, "fail", NULL, "unsupported f");
      continue;
    }
    char a[4096], b[4096];
    const char* cmd[4];
    int cmdc;
    if (is_write) {
      snprintf(a, sizeof a, "%.*s", (int)vl, val);
      cmd[0] = "SET";
      cmd[1] = key;
      cmd[2] = a;
      cmdc = 3;
    } else {
      /* [old,new] with scalar elements (the register workload's values). */
      const char* comma = memchr(val, ',', vl);
      if (vl < 5 || val[0] != '[' || !comma) {
        answer(id, "fail", NULL, "cas value must be [expected, new]");
        continue;
      }
      snprintf(a, sizeof a, "%.*s", (int)(comma - val - 1), val + 1);
      snprintf(b, sizeof b, "%.*s", (int)(val + vl - 1 - comma - 1), comma + 1);
      if (!strcmp(a, "null")) {
        answer(id, "fail", NULL, "cas from null is not supported by raftkv");
        continue;
      }
      cmd[0] = "CAS";
      cmd[1] = key;
      cmd[2] = a;
      cmd[3] = b;
      cmdc = 4;
    }
    Conn* c = &own;
    for (int attempt = 0;; attempt++) {
      int r = call(c, cmdc, cmd, deadline, reply, sizeof reply, &num);
      if (r == R_ERR_CONNECT) {
        answer(id, "fail", NULL, "connect");
        break;
      }
      if (r == R_ERR_TIMEOUT) {
        answer(id, "info", NULL, "timeout");
        break;
      }
      if (r == R_ERR_IO) {
        answer(id, "info", NULL, "connection lost");
        break;
      }
      if (r == R_ERROR && attempt == 0 && !strncmp(reply, "NOTLEADER ", 10)) {
        /* NOTLEADER <id> <host:port> */
        char* sp = strchr(reply + 10, ' ');
        char* colon = sp ? strrchr(sp, ':') : NULL;
        if (!colon) {
          answer(id, "fail", NULL, "NOTLEADER");
          break;
        }
        *colon = 0;
        int lport = atoi(colon + 1);
        if (strcmp(leader.host, sp + 1) != 0 || leader.port != lport) {
          conn_close(&leader);
          snprintf(leader.host, sizeof leader.host, "%s", sp + 1);
          leader.port = lport;
        }
        c = &leader;
        continue;
      }
      if (r == R_ERROR) {
        static const char* no_effect[] = {"NOTLEADER", "NOLEADER", "LOCKED",
                                          "ERR",       "NOTOWNER", "FENCED",
                                          "WRONGTYPE"};
        int fail = 0;
        for (size_t i = 0; i < sizeof no_effect / sizeof *no_effect; i++) {
          size_t m = strlen(no_effect[i]);
          if (!strncmp(reply, no_effect[i], m) &&
              (reply[m] == 0 || reply[m] == ' '))
            fail = 1;
        }
        answer(id, fail ? "fail" : "info", NULL, fail ? "refused" : "error");
        break;
      }
      if (is_write && r == R_SIMPLE && !strcmp(reply, "OK"))
        answer(id, "ok", NULL, NULL);
      else if (is_cas && r == R_INT && num == 1)
        answer(id, "ok", NULL, NULL);
      else if (is_cas && r == R_INT && num == 0)
        answer(id, "fail", NULL, "mismatch");
      else {
        conn_close(c);
        answer(id, "info", NULL, "unexpected reply");
      }
      break;
    }
  }
  return 0;
}
