# serial.s: y = exp(x) over n fp16 elements, single-buffered, every stage
# fenced by a flag: the sync-stall example for the advisor (tests/advisor.sh).
#
# Arguments: 0 x, 1 y (GM addresses), 2 n (elements).  Each block takes
# n / block_dim elements, a multiple of TILE/2.  One UB buffer in and one out,
# so MTE2 loads tile i+1 only after MTE3 has stored tile i: the load, the
# vector op and the store of consecutive tiles never overlap, and each pipe
# spends most of the kernel blocked in wait_flag.  vadd.s is the same shape
# done right (two buffers per operand, so the stages overlap).
.equ TILE, 4096             # bytes per tile: small, so latency dominates
.equ BLKS, TILE/32          # 32-byte blocks per tile
.equ REPS, TILE/256         # vector repeats per tile
        ldarg x1, 0
        ldarg x2, 1
        ldarg x3, 2
        rdspr x5, spr=block_idx
        rdspr x6, spr=block_dim
        divu x7, x3, x6         # elements per block
        shli x7, x7, 1          # bytes per block
        mul x8, x5, x7          # this block's byte offset
        add x1, x1, x8
        add x2, x2, x8
        li x9, TILE
        divu x10, x7, x9        # tiles in this block
        li x11, 0               # UB: input tile
        li x12, TILE            # UB: output tile
        set_flag src=mte3, dst=mte2, ev=0   # the buffers start free
loop:
        wait_flag src=mte3, dst=mte2, ev=0  # the previous tile is stored
        mov.gm.ub x11, x1, len=BLKS
        set_flag src=mte2, dst=v, ev=0
        wait_flag src=mte2, dst=v, ev=0     # the tile has landed
        vexp x12, x11, dt=f16, rep=REPS
        set_flag src=v, dst=mte3, ev=0
        wait_flag src=v, dst=mte3, ev=0     # the result is ready
        mov.ub.gm x2, x12, len=BLKS
        set_flag src=mte3, dst=mte2, ev=0
        addi x1, x1, TILE
        addi x2, x2, TILE
        addi x10, x10, -1
        bne x10, x0, loop
        wait_flag src=mte3, dst=mte2, ev=0  # drain: the last store
        end
