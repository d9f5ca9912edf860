// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// ledger N: a C++ program whose writes come from a method of a class
// template in a namespace, shop::Ledger<long>::post_entry, so that its
// call sites have a mangled name (_ZN4shop6LedgerIlE10post_entryEl) for
// --stacks to demangle. N entries, each one write(2) to /dev/null, then a
// pause so that the process's mappings are read before it exits.
#include <cstdlib>
#include <fcntl.h>
#include <unistd.h>

namespace shop
{
template <typename T> class Ledger {
    public:
	explicit Ledger(int fd) : fd_(fd)
	{
	}
	__attribute__((noinline)) void post_entry(T amount)
	{
		char line[32];
		int n = 0;

		for (T a = amount; n < 20 && a; a /= 10)
			line[n++] = (char)('0' + a % 10);
		line[n++] = '\n';
		if (write(fd_, line, (size_t)n) < 0)
			std::exit(1);
	}

    private:
	int fd_;
};
} // namespace shop

int main(int argc, char **argv)
{
	long n = argc > 1 ? std::atol(argv[1]) : 10000;
	int fd = open("/dev/null", O_WRONLY);
	shop::Ledger<long> book(fd);

	if (fd < 0)
		return 1;
	for (long i = 1; i <= n; i++)
		book.post_entry(i);
	usleep(300000);
	return 0;
}
