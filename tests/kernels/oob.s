# oob.s: a vector add whose destination runs past the end of the UB.
        li x1, 0
        li x2, 261120            # 255 KiB: the 2 KiB of 8 repeats cross the end
        vadd x2, x1, x1, dt=f16, rep=8
        end
