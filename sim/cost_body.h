/* cost_body.h: sim_insn_cost's body, included by cost.c once per
 * instruction form (C has no templates).  The includer defines
 *   COST_FN    the function's name
 *   COST_INSN  the instruction struct it reads (the members have the same
 *              names in both forms)
 * and this file undefines them again. */

struct sim_cost COST_FN(const struct sim_costcfg *cc, const COST_INSN *in, unsigned *pipe_out,
		       uint64_t *bytes_out, enum sim_path *path_out)
{
	const struct isa_info *info = &isa_table[(uint8_t)in->op];
	struct sim_cost c = { 0, 0 };
	unsigned pipe = info->pipe;
	enum sim_path path = SIM_PATH_NONE;
	uint64_t bytes = 0;
/* a burst descriptor's bytes, computed only by the cases that read one */
#define dma ((uint64_t)in->nburst * (uint64_t)in->len * BLK)

	switch ((enum isa_op)in->op) {
	case ISA_OP_SET_FLAG:
	case ISA_OP_WAIT_FLAG:
		pipe = sim_flag_pipe(in->op, in->src, in->dst);
		break;
	case ISA_OP_BARRIER:
		pipe = (unsigned)in->pipe;
		break;
	case ISA_OP_LD_GM:
	case ISA_OP_LDW_GM: /* the scalar unit stalls for a miss to main memory */
		c.occ = cc->scalar;
		c.lat = cc->l2_lat + cc->hbm_lat;
		break;
	case ISA_OP_MOV_GM_L1:
	case ISA_OP_MOV_GM_UB:
		path = SIM_PATH_GM_RD;
		bytes = dma;
		c = sim_mem_time(cc, bytes, 0, 0, 1.0, 1.0);
		break;
	case ISA_OP_MOV_UB_GM:
		path = SIM_PATH_GM_WR;
		bytes = dma;
		c = sim_mem_time(cc, bytes, 0, 1, 1.0, 1.0);
		break;
	case ISA_OP_AIPP_GM_L1: /* priced by its handler: the bytes are in its configuration */
		break;
	case ISA_OP_MOV_L1_UB:
		path = SIM_PATH_L1_UB;
		bytes = dma;
		c = local(cc, path, bytes);
		break;
	case ISA_OP_MOV_UB_L1:
		path = SIM_PATH_UB_L1;
		bytes = dma;
		c = local(cc, path, bytes);
		break;
	case ISA_OP_LOAD2D_L0A:
	case ISA_OP_LOAD2D_L0B:
		path = in->op == ISA_OP_LOAD2D_L0A ? SIM_PATH_L1_L0A : SIM_PATH_L1_L0B;
		bytes = (uint64_t)in->rep * FRAC;
		c = local(cc, path, bytes);
		break;
	case ISA_OP_LOAD3D: /* what it writes into L0A */
		path = SIM_PATH_L1_L0A;
		bytes = (uint64_t)(in->mcnt / 16) * (uint64_t)in->k1cnt * FRAC;
		c = local(cc, path, bytes);
		break;
	case ISA_OP_SET_FMATRIX:
	case ISA_OP_VMASK:
	case ISA_OP_VMASKN:
		c.occ = 1;
		break;
	case ISA_OP_MMAD: /* an int8 step takes twice the depth */
		c = mmad_cost(cc, (uint64_t)in->m, (uint64_t)in->k, (uint64_t)in->n,
			      in->dt == ISA_DT_S8);
		break;
	case ISA_OP_MOV_L0C_UB:
		path = SIM_PATH_L0C_UB;
		bytes = (uint64_t)in->nfrac * L0C_FRAC;
		c = local(cc, path, bytes);
		break;
	case ISA_OP_VTRANSPOSE: /* a 16x16 matrix of 2-byte elements a repeat */
		c.occ = (uint64_t)in->rep * ceil_div(2 * REPEAT_BYTES, cc->vec_bpc);
		c.lat = cc->vec_lat;
		break;
	default:
		if (pipe == ISA_PIPE_S) {
			c.occ = cc->scalar;
		} else if (pipe == ISA_PIPE_V) {
			c.occ = (uint64_t)in->rep * cc->vec_repeat;
			if (info->flags & ISA_F_COMPLEX)
				c.occ *= cc->vec_complex;
			c.lat = cc->vec_lat;
		}
		break;
	}
	if (pipe_out)
		*pipe_out = pipe;
	if (bytes_out)
		*bytes_out = bytes;
	if (path_out)
		*path_out = path;
	return c;
}

#undef dma
#undef COST_FN
#undef COST_INSN
