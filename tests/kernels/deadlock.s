# deadlock.s: V waits for a flag that MTE2 never sets; the simulator must
# stop with a deadlock report naming every blocked pipe.
        li x1, 0
        wait_flag src=mte2, dst=v, ev=0  # nobody sets this
        vadd x1, x1, x1, dt=f16
        end
