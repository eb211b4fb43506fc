# vpeak.s: the vector unit's fp16 peak, data kept in the UB (no GM traffic).
#
# AIBench's vector figure for the 910 (3390 GFLOPS, ascend.md 4.1) is a peak
# of the vector unit; bench/aibench.sh compares this kernel's rate with it.
# Each vadd takes 255 full repeats of 128 fp16 lanes (one flop a lane): A, B
# and C are 255 x 256 bytes each in the UB.  Nothing is read from GM, so the
# time is the vector unit's alone (vector.bytes_per_cycle per repeat).
#
# Arguments: 0 iterations (4 vadds each).  Every block runs the same loop.
.equ REP, 255
.equ BUF, REP*256
        ldarg x1, 0
        li x2, 0                # A
        li x3, BUF              # B
        li x4, 2*BUF            # C
loop:
        vadd x4, x2, x3, dt=f16, rep=REP
        vadd x4, x2, x3, dt=f16, rep=REP
        vadd x4, x2, x3, dt=f16, rep=REP
        vadd x4, x2, x3, dt=f16, rep=REP
        addi x1, x1, -1
        bne x1, x0, loop
        end
