// udt4_recv: the reference UDT receiver of cclab's interoperability test
// (crates/cclab-net/tests/interop_udt4.rs). It listens on PORT (0: any free
// port) as a UDT listener (UDT_STREAM), prints the bound port on a line of its
// own, accepts one connection and reads cclab's stream from it: the content's
// length (8 bytes, big-endian), the content, then its FNV-1a 64-bit checksum
// (8 bytes, big-endian). It writes the content to OUT, checks the checksum,
// prints one summary line and exits 0 only if the content verified.
//
// Written against the API of UDT 4.11 (Debian's libudt-dev, <udt/udt.h>, see
// its doc/ pages): UDT::startup, UDT::socket(AF_INET, SOCK_STREAM, 0),
// UDT::bind, UDT::getsockname, UDT::listen, UDT::accept, UDT::setsockopt
// (UDT_RCVTIMEO), UDT::recv (blocking; returns what has arrived, in order),
// UDT::perfmon, UDT::close, UDT::cleanup, UDT::getlasterror.
//
// usage: udt4_recv PORT OUT

#include <udt/udt.h>

#include <arpa/inet.h>
#include <stdint.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

static void fail(const char* what) {
    std::printf("udt4_recv: FAILED: %s: %s\n", what, UDT::getlasterror().getErrorMessage());
    std::exit(1);
}

// Reads exactly len bytes; every byte was acknowledged by UDT before recv returns it.
static void recv_exact(UDTSOCKET u, char* out, int len) {
    while (len > 0) {
        int n = UDT::recv(u, out, len, 0);
        if (n == UDT::ERROR) fail("recv");
        out += n;
        len -= n;
    }
}

static uint64_t get_be64(const char* in) {
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v = (v << 8) | (unsigned char)in[i];
    return v;
}

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: udt4_recv PORT OUT\n");
        return 2;
    }
    FILE* out = std::fopen(argv[2], "wb");
    if (!out) {
        std::perror(argv[2]);
        return 1;
    }
    UDT::startup();
    UDTSOCKET server = UDT::socket(AF_INET, SOCK_STREAM, 0);
    if (server == UDT::INVALID_SOCK) fail("socket");
    sockaddr_in addr;
    std::memset(&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_port = htons((uint16_t)std::atoi(argv[1]));
    addr.sin_addr.s_addr = htonl(INADDR_ANY);
    if (UDT::bind(server, (sockaddr*)&addr, sizeof addr) == UDT::ERROR) fail("bind");
    int len = sizeof addr;
    if (UDT::getsockname(server, (sockaddr*)&addr, &len) == UDT::ERROR) fail("getsockname");
    if (UDT::listen(server, 1) == UDT::ERROR) fail("listen");
    std::printf("%d\n", ntohs(addr.sin_port));
    std::fflush(stdout);

    UDTSOCKET u = UDT::accept(server, 0, 0);
    if (u == UDT::INVALID_SOCK) fail("accept");
    // A stalled transfer ends with an error instead of waiting for ever.
    int timeout_ms = 30000;
    if (UDT::setsockopt(u, 0, UDT_RCVTIMEO, &timeout_ms, sizeof timeout_ms) == UDT::ERROR) fail("setsockopt");

    char word[8];
    recv_exact(u, word, 8);
    uint64_t total = get_be64(word), hash = 0xcbf29ce484222325ULL;
    static char buf[1 << 20];
    for (uint64_t left = total; left > 0;) {
        int n = left < sizeof buf ? (int)left : (int)sizeof buf;
        recv_exact(u, buf, n);
        for (int i = 0; i < n; ++i) hash = (hash ^ (unsigned char)buf[i]) * 0x100000001b3ULL;
        if (std::fwrite(buf, 1, n, out) != (size_t)n) {
            std::printf("udt4_recv: FAILED: cannot write %s\n", argv[2]);
            return 1;
        }
        left -= n;
    }
    recv_exact(u, word, 8);
    uint64_t sent = get_be64(word);
    if (std::fclose(out) != 0) {
        std::printf("udt4_recv: FAILED: cannot write %s\n", argv[2]);
        return 1;
    }

    UDT::TRACEINFO perf;
    bool have_perf = UDT::perfmon(u, &perf) != UDT::ERROR;  // fails once the peer has closed
    // Wait (at most 3 s) for the sender's shutdown, answering its retransmissions meanwhile:
    // recv fails at once when the peer has closed, and times out otherwise.
    timeout_ms = 3000;
    UDT::setsockopt(u, 0, UDT_RCVTIMEO, &timeout_ms, sizeof timeout_ms);
    int extra = UDT::recv(u, buf, 1, 0);
    int code = extra == UDT::ERROR ? UDT::getlasterror().getErrorCode() : 0;
    std::string end = extra > 0 ? "more data after the checksum"
                      : code == CUDTException::ECONNLOST ? "peer closed"
                      : code == CUDTException::ETIMEOUT ? "no shutdown from the peer within 3 s"
                      : UDT::getlasterror().getErrorMessage();
    UDT::close(u);
    UDT::close(server);
    UDT::cleanup();
    bool ok = sent == hash && extra <= 0;
    std::printf("udt4_recv: %s: %llu bytes, fnv1a64 %016llx (sender's %016llx); %s", ok ? "OK" : "FAILED",
                (unsigned long long)total, (unsigned long long)hash, (unsigned long long)sent, end.c_str());
    if (have_perf)
        std::printf("; packets received %lld, NAKs sent %d, ACKs sent %d, RTT %.3f ms", (long long)perf.pktRecvTotal,
                    perf.pktSentNAKTotal, perf.pktSentACKTotal, perf.msRTT);
    std::printf("\n");
    return ok ? 0 : 1;
}
