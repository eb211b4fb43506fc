/* acl_config.c: the SoC the ACL layer simulates: aclInit's config file
 * ([device] soc = and set = lines, read with inih), the default and
 * $DAVINCI_SOC, and aclsimSetSoc. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ini.h>

#include "acl_int.h"

/* Copy a string, truncating (snprintf's "%s" into a shorter array is what
 * -Wformat-truncation rejects). */
void acl_copy_str(char *dst, size_t len, const char *src)
{
	size_t n = strnlen(src, len - 1);
	memcpy(dst, src, n);
	dst[n] = '\0';
}

struct config_parse {
	FILE *f;
	int line, next_line;
	char msg[512];
};

/* inih reads through this so the handler knows the line it is on. */
static char *config_reader(char *str, int num, void *stream)
{
	struct config_parse *p = stream;
	char *r = fgets(str, num, p->f);
	if (r) {
		p->line = p->next_line;
		if (strchr(r, '\n'))
			p->next_line++;
	}
	return r;
}

static int config_handler(void *user, const char *section, const char *name, const char *value)
{
	struct config_parse *p = user;
	if (strcmp(section, "device") != 0) {
		snprintf(p->msg, sizeof p->msg, "key '%s' is in unknown section [%s] (the only one "
			 "is [device])", name, section);
		return 0;
	}
	if (strcmp(name, "soc") == 0) {
		if (!*value || strlen(value) >= sizeof acl_state.soc) {
			snprintf(p->msg, sizeof p->msg, "soc = wants a chip name or an .ini path");
			return 0;
		}
		acl_copy_str(acl_state.soc, sizeof acl_state.soc, value);
		snprintf(acl_state.soc_from, sizeof acl_state.soc_from, "line %d of %s", p->line,
			 acl_state.config);
		acl_state.soc_in_config = 1;
		acl_state.soc_is_default = 0;
		return 1;
	}
	if (strcmp(name, "set") == 0) {
		if (acl_state.nsets == MAX_SETS) {
			snprintf(p->msg, sizeof p->msg, "more than %d set = lines", MAX_SETS);
			return 0;
		}
		char *s = strdup(value);
		if (!s) {
			snprintf(p->msg, sizeof p->msg, "out of memory");
			return 0;
		}
		acl_state.sets[acl_state.nsets++] = (struct soc_set_line){ s, p->line };
		return 1;
	}
	snprintf(p->msg, sizeof p->msg, "unknown key '%s' in [device] (soc, set)", name);
	return 0;
}

aclError acl_read_config(const char *fn, const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return acl_fail(ACL_ERROR_INVALID_FILE, fn, "%s: %s", path, strerror(errno));
	acl_copy_str(acl_state.config, sizeof acl_state.config, path);
	int c;
	while ((c = getc(f)) == ' ' || c == '\t' || c == '\n' || c == '\r')
		;
	if (c == '{') { /* ACL's JSON (dump and profiling settings): nothing for us */
		fclose(f);
		return ACL_SUCCESS;
	}
	rewind(f);
	struct config_parse p = { .f = f, .next_line = 1 };
	int rc = ini_parse_stream(config_reader, &p, config_handler, &p);
	fclose(f);
	if (rc < 0)
		return acl_fail(ACL_ERROR_INVALID_FILE, fn, "%s: could not be read", path);
	if (rc > 0)
		return acl_fail(ACL_ERROR_PARSE_FILE, fn, "%s:%d: %s", path, rc,
				p.msg[0] ? p.msg : "expected '[device]' or 'key = value'");
	return ACL_SUCCESS;
}

/* Load the SoC named by soc with the config's overrides into *cfg. */
aclError acl_load_soc(const char *fn, const char *soc, const char *from, aclError code,
			     struct soc_config *cfg)
{
	char err[1024];
	if (soc_load(soc, cfg, err, sizeof err))
		return acl_fail(code, fn, "SoC '%s' (from %s): %s", soc, from, err);
	for (unsigned i = 0; i < acl_state.nsets; i++)
		if (soc_set(cfg, acl_state.sets[i].assign, err, sizeof err))
			return acl_fail(ACL_ERROR_FILE_ATTR_INVALID, fn, "%s:%d: set = %s: %s",
					acl_state.config, acl_state.sets[i].line,
					acl_state.sets[i].assign, err);
	return ACL_SUCCESS;
}

void acl_free_sets(void)
{
	for (unsigned i = 0; i < acl_state.nsets; i++)
		free(acl_state.sets[i].assign);
	acl_state.nsets = 0;
}

aclError aclsimSetSoc(const char *socNameOrIni)
{
	NEED_INIT();
	if (acl_state.dev)
		return FAIL(ACL_ERROR_REPEAT_INITIALIZE, "the device is already set: choose the SoC "
			    "before aclrtSetDevice (or after the last aclrtResetDevice)");
	if (!socNameOrIni || !*socNameOrIni || strlen(socNameOrIni) >= sizeof acl_state.soc)
		return FAIL(ACL_ERROR_INVALID_PARAM, "socNameOrIni must be a chip name or an .ini path");
	struct soc_config cfg;
	aclError e = acl_load_soc(__func__, socNameOrIni, "aclsimSetSoc", ACL_ERROR_INVALID_PARAM, &cfg);
	if (e != ACL_SUCCESS)
		return e;
	acl_state.cfg = cfg;
	acl_copy_str(acl_state.soc, sizeof acl_state.soc, socNameOrIni);
	snprintf(acl_state.soc_from, sizeof acl_state.soc_from, "aclsimSetSoc");
	acl_state.soc_is_default = 0;
	return ACL_SUCCESS;
}
