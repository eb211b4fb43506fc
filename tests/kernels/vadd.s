# vadd.s: C = A + B over n fp16 elements, double-buffered through the UB.
#
# Arguments: 0 A, 1 B, 2 C (GM addresses), 3 n (elements).  Each block takes
# n / block_dim elements, which must be a multiple of TILE (2 tiles per loop).
# MTE2 brings tiles of A and B in, V adds, MTE3 writes C out; event ids 0 and
# 1 guard buffers 0 and 1, so loading tile i+1 overlaps adding tile i and
# storing tile i-1.
.equ TILE, 32768            # bytes per buffer
.equ BLKS, TILE/32          # 32-byte blocks per buffer
.equ REPS, TILE/256         # vector repeats per buffer
        ldarg x1, 0
        ldarg x2, 1
        ldarg x3, 2
        ldarg x4, 3
        rdspr x5, spr=block_idx
        rdspr x6, spr=block_dim
        divu x7, x4, x6         # elements per block
        shli x7, x7, 1          # bytes per block
        mul x8, x5, x7          # this block's byte offset
        add x1, x1, x8
        add x2, x2, x8
        add x3, x3, x8
        li x9, 2*TILE
        divu x10, x7, x9        # iterations: two tiles each
        li x11, 0               # UB: A0 A1 B0 B1 C0 C1
        li x12, TILE
        li x13, 2*TILE
        li x14, 3*TILE
        li x15, 4*TILE
        li x16, 5*TILE
        # every buffer starts free
        set_flag src=v, dst=mte2, ev=0
        set_flag src=v, dst=mte2, ev=1
        set_flag src=mte3, dst=v, ev=0
        set_flag src=mte3, dst=v, ev=1
loop:
        wait_flag src=v, dst=mte2, ev=0
        mov.gm.ub x11, x1, len=BLKS
        mov.gm.ub x13, x2, len=BLKS
        set_flag src=mte2, dst=v, ev=0
        wait_flag src=mte2, dst=v, ev=0
        wait_flag src=mte3, dst=v, ev=0
        vadd x15, x11, x13, dt=f16, rep=REPS
        set_flag src=v, dst=mte2, ev=0
        set_flag src=v, dst=mte3, ev=0
        wait_flag src=v, dst=mte3, ev=0
        mov.ub.gm x3, x15, len=BLKS
        set_flag src=mte3, dst=v, ev=0
        addi x1, x1, TILE
        addi x2, x2, TILE
        addi x3, x3, TILE

        wait_flag src=v, dst=mte2, ev=1
        mov.gm.ub x12, x1, len=BLKS
        mov.gm.ub x14, x2, len=BLKS
        set_flag src=mte2, dst=v, ev=1
        wait_flag src=mte2, dst=v, ev=1
        wait_flag src=mte3, dst=v, ev=1
        vadd x16, x12, x14, dt=f16, rep=REPS
        set_flag src=v, dst=mte2, ev=1
        set_flag src=v, dst=mte3, ev=1
        wait_flag src=v, dst=mte3, ev=1
        mov.ub.gm x3, x16, len=BLKS
        set_flag src=mte3, dst=v, ev=1
        addi x1, x1, TILE
        addi x2, x2, TILE
        addi x3, x3, TILE

        addi x10, x10, -1
        bne x10, x0, loop
        # drain: take back every "buffer free" flag
        wait_flag src=v, dst=mte2, ev=0
        wait_flag src=v, dst=mte2, ev=1
        wait_flag src=mte3, dst=v, ev=0
        wait_flag src=mte3, dst=v, ev=1
        end
