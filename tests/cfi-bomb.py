#!/usr/bin/env python3
"""Hostile .eh_frame sections for t-unwind-hostile.sh.

    cfi-bomb.py KIND LO SIZE > section.bin

Writes an .eh_frame (for a section at address 0: FDE addresses absolute,
8 bytes) whose FDEs cover [LO, LO + SIZE), built to exhaust an unwinder that
runs every CFA program as given (libdw's dwarf_cfi_addrframe per row):

  flood   one FDE, 8 M DW_CFA_remember_state (8 MB): a copy of the register
          state each, all alive at once
  quad    one FDE, ~220 rows over 4 M remember_state: each row runs the
          program from its start
  pairs   the same with remember_state/restore_state pairs (no memory:
          only time)
  wide    1000 FDEs of 4096 one-byte rows each: quadratic in each FDE
  rows    260 000 FDEs of 16 rows each: more rows than a table may hold
  expr    a CFA expression of 1 M pushes, then DW_OP_entry_value blocks
          nested 64 K deep, then 4000 rows
  reg     a rule for register 200 M (the register state grows to it)
  ok      one ordinary FDE (push rbp; mov rbp, rsp)
"""
import struct
import sys

ADV1 = b'\x41'            # DW_CFA_advance_loc 1
REMEMBER, RESTORE = b'\x0a', b'\x0b'


def uleb(v):
    out = bytearray()
    while True:
        b, v = v & 0x7f, v >> 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def entry(body):
    pad = (-(4 + len(body))) % 8
    return struct.pack('<I', len(body) + pad) + body + b'\0' * pad


def cie():
    # version 1, no augmentation (absolute 8-byte FDE pointers), code
    # alignment 1, data alignment -8, return address r16; CFA = rsp + 8,
    # return address at CFA - 8
    return entry(struct.pack('<I', 0) + b'\x01\x00' + uleb(1) + b'\x78\x10' +
                 b'\x0c\x07\x08' + b'\x90\x01')


def section(kind, lo, size):
    out = bytearray(cie())

    def fde(start, length, prog):
        # the CIE pointer: the distance back from this field to the CIE (at 0)
        out.extend(entry(struct.pack('<IQQ', len(out) + 4, start, length) + prog))

    if kind == 'flood':
        fde(lo, size, REMEMBER * (8 << 20))
    elif kind == 'quad':
        step = (4 << 20) // 220
        fde(lo, size, (REMEMBER * step + ADV1) * 220)
    elif kind == 'pairs':
        step = (2 << 20) // 220
        fde(lo, size, ((REMEMBER + RESTORE) * step + ADV1) * 220)
    elif kind == 'wide':
        for i in range(1000):
            fde(lo + i * 4096, 4096, ADV1 * 4096)
    elif kind == 'rows':
        prog = ADV1 * 16
        for i in range(260000):
            fde(lo + i * 32, 32, prog)
    elif kind == 'expr':
        # 1 M DW_OP_lit0 (a stack 1 M deep), then DW_OP_entry_value (0xa3)
        # ULEB128 length, block: 64 K of them each in the block of the last
        # (lengths from the inside out)
        inner = [1]
        while inner[-1] < (64 << 10):
            inner.append(1 + len(uleb(inner[-1])) + inner[-1])
        body = b'\x30' * (1 << 20)
        body += b''.join(b'\xa3' + uleb(n) for n in reversed(inner[:-1])) + b'\x30'
        fde(lo, size, b'\x0f' + uleb(len(body)) + body + ADV1 * 4000)
    elif kind == 'reg':
        fde(lo, size, b'\x05' + uleb(200 << 20) + b'\x01' + ADV1 * 8)
    elif kind == 'lie':
        # small and valid, and wrong: the whole of .text "at a function's
        # first instruction" (the CIE's CFA = rsp + 8): a table any budget
        # takes, that unwinds the library's frames to garbage
        fde(lo, size, b'')
    elif kind == 'ok':
        fde(lo, size, b'\x41\x0e\x10\x86\x02\x43\x0d\x06')
    else:
        sys.exit('cfi-bomb.py: unknown kind ' + kind)
    out.extend(b'\0\0\0\0')    # the terminator
    return bytes(out)


if __name__ == '__main__':
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    sys.stdout.buffer.write(section(sys.argv[1], int(sys.argv[2], 0), int(sys.argv[3], 0)))
