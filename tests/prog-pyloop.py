# A fixed amount of work, not of time (about 2 s of CPU), for unwinding
# Debian's python3 (no frame pointers): t-unwind-stock.sh and
# bench/bench-unwind.sh.
def work(n):
    s = 0
    for i in range(n):
        s += i * i
    return s


for _ in range(300):
    work(100000)
