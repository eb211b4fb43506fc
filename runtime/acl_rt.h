/* acl_rt.h: ACL splits its API over acl_rt.h, acl_mdl.h, acl_prof.h and acl.h; here
 * one header holds it all, so a sample including any of them gets acl.h
 * (installed side by side under include/acl/). */
#ifndef DV_ACL_RT_H
#define DV_ACL_RT_H
#include "acl.h"
#endif
