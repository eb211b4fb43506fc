/* isa/aipp.h: the configuration block of the aipp.gm.l1 instruction.
 *
 * The real AI Core does AIPP in the MTE2 data path while it loads an image
 * into L1, programmed by AIPP configuration registers (ascend.md 3.2: "It
 * runs on the AI Core"; ascend-runtime.md 6.2).  Here those registers are a
 * block of AIPP_CFG_WORDS little-endian 32-bit words in GM (the compiler puts
 * it in the weights), named by the instruction's xcfg register: one layout
 * shared by the compiler (compiler/kern_aipp.c writes it) and the simulator
 * (sim/exec_aipp.c reads it).  Floats are stored as their IEEE fp32 bits. */
#ifndef DV_ISA_AIPP_H
#define DV_ISA_AIPP_H

#define AIPP_CFG_MAGIC 0x50504941u /* "AIPP" */

/* input_format values (ATC's names) */
enum aipp_format { AIPP_YUV420SP_U8 = 1, AIPP_XRGB8888_U8 = 2, AIPP_RGB888_U8 = 3,
		   AIPP_YUV400_U8 = 4 };

enum aipp_word {
	AIPP_W_MAGIC = 0,
	AIPP_W_FORMAT = 1,
	AIPP_W_SRC_W = 2, AIPP_W_SRC_H = 3,
	AIPP_W_CROP_X = 4, AIPP_W_CROP_Y = 5, AIPP_W_CROP_W = 6, AIPP_W_CROP_H = 7,
	AIPP_W_PAD_L = 8, AIPP_W_PAD_R = 9, AIPP_W_PAD_T = 10, AIPP_W_PAD_B = 11,
	AIPP_W_RBUV_SWAP = 12, AIPP_W_AX_SWAP = 13, AIPP_W_CSC = 14,
	AIPP_W_MATRIX = 15,      /* 9 words, row-major r0c0..r2c2, integers scaled by 256 */
	AIPP_W_IN_BIAS = 24,     /* 3 words */
	AIPP_W_OUT_BIAS = 27,    /* 3 words */
	AIPP_W_MEAN = 30,        /* 4 words, integers */
	AIPP_W_MIN = 34,         /* 4 words, fp32 bits */
	AIPP_W_VAR = 38,         /* 4 words, fp32 bits */
	AIPP_W_CHANNELS = 42,    /* channels produced: 3, or 1 for YUV400 */
	AIPP_W_C0 = 43,          /* lanes a pixel in L1: 16 (NC1HWC0; 0 reads as 16) or 4
				  * (NC1HWC0_C04, ATC's AIPP output with --enable_small_channel) */
	AIPP_CFG_WORDS = 48      /* 192 bytes, six 32-byte blocks */
};

/* Bytes of one source image of w x h pixels (YUV420SP: NV12, the Y plane then
 * the interleaved UV plane at half the height). */
static inline long long aipp_image_bytes(int format, long long w, long long h)
{
	switch (format) {
	case AIPP_YUV420SP_U8: return w * h * 3 / 2;
	case AIPP_XRGB8888_U8: return w * h * 4;
	case AIPP_RGB888_U8: return w * h * 3;
	case AIPP_YUV400_U8: return w * h;
	}
	return -1;
}

#endif
