# gemm_s8.s: int8 x int8 -> int32 on the cube: C (32x16) = A (32x64) x B (64x16).
# Arguments: 0 A (L0A layout: [m1=2][k1=2][16][32] int8), 1 B (L0B layout:
# [k1=2][n1=1][32][16] int8), 2 C (int32 [n1=1][m=32][16], written).
        ldarg x1, 0
        ldarg x2, 1
        ldarg x3, 2
        li x4, 0
        li x5, 4096
        mov.gm.l1 x4, x1, len=64         # 2048 bytes
        mov.gm.l1 x5, x2, len=32         # 1024 bytes
        set_flag src=mte2, dst=mte1, ev=0
        wait_flag src=mte2, dst=mte1, ev=0
        load2d.l0a x0, x4, rep=4
        load2d.l0b x0, x5, rep=2
        set_flag src=mte1, dst=m, ev=0
        wait_flag src=mte1, dst=m, ev=0
        mmad x0, x0, x0, m=32, k=64, n=16, init=1, dt=s8
        mmad x0, x0, x0, m=32, k=64, n=16, init=0, dt=s8   # accumulate: C = 2AB
        set_flag src=m, dst=v, ev=0
        wait_flag src=m, dst=v, ev=0
        mov.l0c.ub x0, x0, x0, nfrac=2, cvt=s32
        set_flag src=v, dst=mte3, ev=0
        wait_flag src=v, dst=mte3, ev=0
        mov.ub.gm x3, x0, len=64
        end
