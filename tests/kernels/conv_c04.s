# conv_c04.s: a 7x7 stride-2 pad-3 convolution of a 4-channel 8x8 map on the
# small-channel path: load3d c04=1 over 8-byte pixels, K = 49 taps x 4
# channels in 13 fractals (the last one's 12 elements past the taps zero).
# Arguments: 0 x ([8][8][4] fp16), 1 w (FRACTAL_Z fp16: 13 fractals
# [k1][16 k][16 cout], k element kx = tap kx/4, channel kx%4), 2 y
# (NC1HWC0 fp16, 1x1x4x4x16, written).
        ldarg x1, 0
        ldarg x2, 1
        ldarg x3, 2
        li x4, 0                 # L1: feature map
        li x5, 4096              # L1: weights
        mov.gm.l1 x4, x1, len=16         # 8x8 pixels x 8 bytes
        mov.gm.l1 x5, x2, len=208        # 13 fractals x 512 bytes
        set_flag src=mte2, dst=mte1, ev=0
        wait_flag src=mte2, dst=mte1, ev=0
        set_fmatrix fh=8, fw=8, pt=3, pb=3, pl=3, pr=3
        li x6, 0
        load3d x6, x4, x0, x0, kh=7, kw=7, sh=2, sw=2, mcnt=16, k1cnt=13, dt=f16, c04=1
        load2d.l0b x6, x5, rep=13
        set_flag src=mte1, dst=m, ev=0
        wait_flag src=mte1, dst=m, ev=0
        mmad x6, x6, x6, m=16, k=208, n=16, init=1
        set_flag src=m, dst=v, ev=0
        wait_flag src=m, dst=v, ev=0
        mov.l0c.ub x6, x6, x0, nfrac=1, cvt=f16
        set_flag src=v, dst=mte3, ev=0
        wait_flag src=v, dst=mte3, ev=0
        mov.ub.gm x3, x6, len=16
        end
