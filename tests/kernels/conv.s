# conv.s: one 3x3 convolution, stride 1, pad 1, through img2col (load3d).
# Arguments: 0 x (NC1HWC0 fp16, 1x1x8x8x16), 1 w (FRACTAL_Z fp16: 9 fractals
# [k1][16 cin][16 cout]), 2 y (NC1HWC0 fp16, 1x1x8x8x16, written).
# Matrix view: y[64 pixels][16] = img2col(x)[64][144] x w[144][16].
        ldarg x1, 0
        ldarg x2, 1
        ldarg x3, 2
        li x4, 0                 # L1: feature map
        li x5, 4096              # L1: weights
        mov.gm.l1 x4, x1, len=64         # 8x8 pixels x 32 bytes
        mov.gm.l1 x5, x2, len=144        # 9 fractals x 512 bytes
        set_flag src=mte2, dst=mte1, ev=0
        wait_flag src=mte2, dst=mte1, ev=0
        set_fmatrix fh=8, fw=8, pt=1, pb=1, pl=1, pr=1
        li x6, 0
        load3d x6, x4, x0, x0, kh=3, kw=3, mcnt=64, k1cnt=9, dt=f16
        load2d.l0b x6, x5, rep=9
        set_flag src=mte1, dst=m, ev=0
        wait_flag src=mte1, dst=m, ev=0
        mmad x6, x6, x6, m=64, k=144, n=16, init=1
        set_flag src=m, dst=v, ev=0
        wait_flag src=m, dst=v, ev=0
        mov.l0c.ub x6, x6, x0, nfrac=4, cvt=f16
        set_flag src=v, dst=mte3, ev=0
        wait_flag src=v, dst=mte3, ev=0
        mov.ub.gm x3, x6, len=64
        end
