# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Installing gpuctx (issue 31), included by the Makefile.
#   make install [PREFIX=/usr/local] [DESTDIR=]   the binary (its BPF objects are embedded: one
#                                                 file), man pages, bash completion, systemd units
#   make uninstall [PREFIX=...] [DESTDIR=]        removes exactly those files
#   make deb                                      build/gpuctx_$(VERSION)_<arch>.deb (dpkg-deb,
#                                                 control file from debian/ and dpkg-shlibdeps)
#   make check-install                            tests/install/run.sh (root: runs the installed
#                                                 binary and the packaged one)
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
UNITDIR ?= $(PREFIX)/lib/systemd/system
INSTALL ?= install
MAN_PAGES := $(wildcard man/*.8)
# the Slurm SPANK plugin, when it was built (Slurm's headers: make all builds it); Debian's
# Slurm loads plugins from here (plugstack.conf names the file: docs/cluster.md)
SLURM_PLUGINDIR ?= /usr/lib/$(shell $(CC) -print-multiarch 2>/dev/null)/slurm-wlm
# the agent's systemd units, where a folder of the tree holds them
SYSTEMD_UNITS := $(wildcard systemd/*.service tools/*.service)

.PHONY: install uninstall deb check-install

install: $(BUILD)/gpuctx
	$(call msg,INSTALL,$(DESTDIR)$(PREFIX))
	$(Q)$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(BASHCOMPDIR)
	$(Q)$(INSTALL) -m 0755 $(BUILD)/gpuctx $(DESTDIR)$(BINDIR)/gpuctx
	$(Q)$(INSTALL) -m 0644 $(MAN_PAGES) $(DESTDIR)$(MANDIR)/man8/
	$(Q)$(INSTALL) -m 0644 completion/gpuctx.bash $(DESTDIR)$(BASHCOMPDIR)/gpuctx
	$(Q)set -e; for u in $(SYSTEMD_UNITS); do \
		$(INSTALL) -d $(DESTDIR)$(UNITDIR); \
		sed 's|@BINDIR@|$(BINDIR)|g' $$u >$(DESTDIR)$(UNITDIR)/$$(basename $$u); \
		chmod 0644 $(DESTDIR)$(UNITDIR)/$$(basename $$u); done
	$(Q)if [ -e $(BUILD)/gpuctx_spank.so ]; then $(INSTALL) -d $(DESTDIR)$(SLURM_PLUGINDIR) && \
		$(INSTALL) -m 0755 $(BUILD)/gpuctx_spank.so $(DESTDIR)$(SLURM_PLUGINDIR)/; fi

uninstall:
	$(call msg,UNINSTALL,$(DESTDIR)$(PREFIX))
	$(Q)rm -f $(DESTDIR)$(BINDIR)/gpuctx $(DESTDIR)$(BASHCOMPDIR)/gpuctx \
		$(patsubst man/%,$(DESTDIR)$(MANDIR)/man8/%,$(MAN_PAGES)) \
		$(patsubst %,$(DESTDIR)$(UNITDIR)/%,$(notdir $(SYSTEMD_UNITS))) \
		$(DESTDIR)$(SLURM_PLUGINDIR)/gpuctx_spank.so

# The package is built from its own tree: the binary with Debian's hardening flags (objects
# under .output/deb/, so the test build is not disturbed), installed into build/deb/root with
# PREFIX=/usr, stripped, man pages and changelog compressed as policy asks; the control file
# comes from debian/control with Depends computed by dpkg-shlibdeps from the binary.
DEB_DIR := $(BUILD)/deb
DEB_ROOT := $(DEB_DIR)/root
DEB_ARCH := $(shell dpkg --print-architecture 2>/dev/null)
DEB := $(BUILD)/gpuctx_$(VERSION)_$(DEB_ARCH).deb
DEB_DOC := $(DEB_ROOT)/usr/share/doc/gpuctx
DEB_FLAGS := DEB_BUILD_MAINT_OPTIONS=hardening=+all

deb:
	$(Q)v=$$(dpkg-parsechangelog -S Version); [ "$$v" = "$(VERSION)" ] || \
		{ echo "deb: debian/changelog is at $$v, the Makefile at $(VERSION)" >&2; exit 1; }
	$(Q)rm -rf $(DEB_ROOT) $(DEB)
	$(Q)CFLAGS="$$($(DEB_FLAGS) dpkg-buildflags --get CFLAGS) $$($(DEB_FLAGS) dpkg-buildflags --get CPPFLAGS)" \
		LDFLAGS="$$($(DEB_FLAGS) dpkg-buildflags --get LDFLAGS)" \
		$(MAKE) --no-print-directory OUTPUT=$(OUTPUT)/deb BUILD=$(DEB_DIR)/bin \
		install DESTDIR=$(CURDIR)/$(DEB_ROOT) PREFIX=/usr UNITDIR=/lib/systemd/system
	$(call msg,DEB,$(DEB))
	$(Q)strip --strip-unneeded --remove-section=.comment --remove-section=.note \
		$(DEB_ROOT)/usr/bin/gpuctx
	$(Q)gzip -9n $(DEB_ROOT)/usr/share/man/man8/*.8
	$(Q)$(INSTALL) -d $(DEB_DOC) $(DEB_ROOT)/DEBIAN $(DEB_ROOT)/usr/share/lintian/overrides
	$(Q)$(INSTALL) -m 0644 debian/copyright $(DEB_DOC)/copyright
	$(Q)gzip -9n <debian/changelog >$(DEB_DOC)/changelog.gz && chmod 0644 $(DEB_DOC)/changelog.gz
	$(Q)$(INSTALL) -m 0644 debian/gpuctx.lintian-overrides \
		$(DEB_ROOT)/usr/share/lintian/overrides/gpuctx
	$(Q)dpkg-shlibdeps -T$(DEB_DIR)/substvars $(DEB_ROOT)/usr/bin/gpuctx
	$(Q)dpkg-gencontrol -pgpuctx -T$(DEB_DIR)/substvars -f$(DEB_DIR)/files -P$(DEB_ROOT)
	$(Q)cd $(DEB_ROOT) && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | \
		LC_ALL=C sort -z | xargs -0 md5sum >DEBIAN/md5sums && chmod 0644 DEBIAN/md5sums
	$(Q)dpkg-deb --root-owner-group -Zxz --build $(DEB_ROOT) $(DEB) >/dev/null

check-install: $(BUILD)/gpuctx
	$(Q)tests/install/run.sh
