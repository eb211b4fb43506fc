# gather_brcb.s: the scalar's loads from GM and vbrcb.
#
# Arguments: 0 idx (4 int32 row numbers, then 1 int64 row number), 1 table
# (fp16 rows of 16 elements), 2 out.  out rows 0..4 are the table rows the
# indices name (ldw.gm for the first four, ld.gm for the fifth); out rows
# 5..12 are vbrcb of the 8 elements of table row 0's first half: row 5+i
# holds element i in all 16 lanes.
        ldarg x1, 0
        ldarg x2, 1
        ldarg x3, 2
        li x9, 0                # UB offset of the next gathered row
        li x10, 0
        li x11, 4
loop:
        shli x12, x10, 2
        add x12, x12, x1
        ldw.gm x4, x12, 0       # the row number
        shli x4, x4, 5          # 32 bytes per row
        add x4, x4, x2
        mov.gm.ub x9, x4, len=1
        addi x9, x9, 32
        addi x10, x10, 1
        blt x10, x11, loop
        ld.gm x4, x1, 16        # the int64 after the four int32
        shli x4, x4, 5
        add x4, x4, x2
        mov.gm.ub x9, x4, len=1
        # row 0 of the table once more, for vbrcb
        li x13, 1024
        mov.gm.ub x13, x2, len=1
        set_flag src=mte2, dst=v, ev=0
        wait_flag src=mte2, dst=v, ev=0
        li x14, 160             # out row 5
        vbrcb x14, x13, dt=f16, rep=1
        set_flag src=v, dst=mte3, ev=0
        wait_flag src=v, dst=mte3, ev=0
        li x15, 0
        mov.ub.gm x3, x15, len=13
        end
