// udt4_plain_recv: a plain UDT 4 receiver for cclab's interoperability test
// (crates/cclab-net/tests/interop_udt4.rs), as any UDT 4 application reads a
// stream of unknown length: it listens on PORT (0: any free port), prints the
// bound port on a line of its own, accepts one connection, and writes whatever
// UDT::recv returns to OUT until the sender closes the connection (UDT::recv
// fails with ECONNLOST once everything that arrived has been read). It exits 0
// then, 1 on any other error. `cclab send --raw` must deliver exactly the file.
//
// Written against the API of UDT 4.11 (Debian's libudt-dev, <udt/udt.h>):
// UDT::startup, UDT::socket(AF_INET, SOCK_STREAM, 0), UDT::bind,
// UDT::getsockname, UDT::listen, UDT::accept, UDT::setsockopt(UDT_RCVTIMEO),
// UDT::recv, UDT::close, UDT::cleanup, UDT::getlasterror.
//
// usage: udt4_plain_recv PORT OUT

#include <udt/udt.h>

#include <arpa/inet.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

static int fail(const char* what) {
    std::printf("udt4_plain_recv: FAILED: %s: %s\n", what, UDT::getlasterror().getErrorMessage());
    return 1;
}

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: udt4_plain_recv PORT OUT\n");
        return 2;
    }
    FILE* out = std::fopen(argv[2], "wb");
    if (!out) {
        std::perror(argv[2]);
        return 1;
    }
    UDT::startup();
    UDTSOCKET server = UDT::socket(AF_INET, SOCK_STREAM, 0);
    if (server == UDT::INVALID_SOCK) return fail("socket");
    sockaddr_in addr;
    std::memset(&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_port = htons((uint16_t)std::atoi(argv[1]));
    addr.sin_addr.s_addr = htonl(INADDR_ANY);
    if (UDT::bind(server, (sockaddr*)&addr, sizeof addr) == UDT::ERROR) return fail("bind");
    int len = sizeof addr;
    if (UDT::getsockname(server, (sockaddr*)&addr, &len) == UDT::ERROR) return fail("getsockname");
    if (UDT::listen(server, 1) == UDT::ERROR) return fail("listen");
    std::printf("%d\n", ntohs(addr.sin_port));
    std::fflush(stdout);

    UDTSOCKET u = UDT::accept(server, 0, 0);
    if (u == UDT::INVALID_SOCK) return fail("accept");
    // A stalled transfer ends with an error instead of waiting for ever.
    int timeout_ms = 30000;
    if (UDT::setsockopt(u, 0, UDT_RCVTIMEO, &timeout_ms, sizeof timeout_ms) == UDT::ERROR) return fail("setsockopt");
    static char buf[1 << 20];
    long long total = 0;
    for (;;) {
        int n = UDT::recv(u, buf, sizeof buf, 0);
        if (n == UDT::ERROR) {
            if (UDT::getlasterror().getErrorCode() == CUDTException::ECONNLOST) break;  // the sender closed
            return fail("recv");
        }
        if (std::fwrite(buf, 1, n, out) != (size_t)n) {
            std::printf("udt4_plain_recv: FAILED: cannot write %s\n", argv[2]);
            return 1;
        }
        total += n;
    }
    if (std::fclose(out) != 0) {
        std::printf("udt4_plain_recv: FAILED: cannot write %s\n", argv[2]);
        return 1;
    }
    UDT::close(u);
    UDT::close(server);
    UDT::cleanup();
    std::printf("udt4_plain_recv: OK: %lld bytes; peer closed\n", total);
    return 0;
}
