# mk/install.mk -- make install / make uninstall (issue 7).
#   make install PREFIX=/usr/local DESTDIR=   headers (include/npzstream*.h), static and shared library (SONAME,
#   versioned file, symlinks), npzstream.pc, the CLI and the man pages npzstream(1), npzstream(3).
PREFIX      ?= /usr/local
DESTDIR     ?=
BINDIR      ?= $(PREFIX)/bin
LIBDIR      ?= $(PREFIX)/lib
INCLUDEDIR  ?= $(PREFIX)/include
MANDIR      ?= $(PREFIX)/share/man
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
INSTALL     ?= install
NPZS_VER    := $(shell sed -n 's/^\#define NPZS_VERSION "\(.*\)"/\1/p' include/npzstream.h)
REALNAME     = libnpzstream.so.$(NPZS_VER)
PUBLIC_HDRS := $(sort $(wildcard include/npzstream*.h))

.PHONY: install uninstall
install: $(B)/libnpzstream.a $(B)/libnpzstream.so $(B)/npzstream
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR) \
	    $(DESTDIR)$(PKGCONFIGDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man3
	$(INSTALL) -m 644 $(PUBLIC_HDRS) $(DESTDIR)$(INCLUDEDIR)/
	$(INSTALL) -m 644 $(B)/libnpzstream.a $(DESTDIR)$(LIBDIR)/libnpzstream.a
	$(INSTALL) -m 755 $(B)/libnpzstream.so $(DESTDIR)$(LIBDIR)/$(REALNAME)
	ln -sf $(REALNAME) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libnpzstream.so
	$(INSTALL) -m 755 $(B)/npzstream $(DESTDIR)$(BINDIR)/npzstream
	$(INSTALL) -m 644 man/npzstream.1 $(DESTDIR)$(MANDIR)/man1/npzstream.1
	$(INSTALL) -m 644 man/npzstream.3 $(DESTDIR)$(MANDIR)/man3/npzstream.3
	printf '%s\n' 'prefix=$(PREFIX)' 'libdir=$(LIBDIR)' 'includedir=$(INCLUDEDIR)' '' \
	    'Name: npzstream' \
	    'Description: streaming, validating parser for NumPy .npy and .npz files' \
	    'Version: $(NPZS_VER)' \
	    'Cflags: -I$${includedir}' \
	    'Libs: -L$${libdir} -lnpzstream' \
	    'Libs.private: $(if $(filter 1,$(ISAL)),-lisal,) $(SSL_LIB) -lz -lm -pthread' > $(DESTDIR)$(PKGCONFIGDIR)/npzstream.pc
	chmod 644 $(DESTDIR)$(PKGCONFIGDIR)/npzstream.pc
	@# the run-time linker: a system prefix gets ldconfig; any other prefix, what to do
	@if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ] && { [ "$(LIBDIR)" = /usr/local/lib ] || [ "$(LIBDIR)" = /usr/lib ]; } \
	    && command -v ldconfig >/dev/null; then \
	  ldconfig && echo "npzstream: ran ldconfig: programs linked with -lnpzstream find $(LIBDIR)/$(SONAME)"; \
	else \
	  echo "npzstream: installed into $(LIBDIR), which the run-time linker may not search. Programs linked"; \
	  echo "  against the shared library need one of: -Wl,-rpath,$(LIBDIR) when linking (as the README does),"; \
	  echo "  LD_LIBRARY_PATH=$(LIBDIR) when running, or $(LIBDIR) in /etc/ld.so.conf.d/ and ldconfig."; \
	fi

uninstall:
	rm -f $(PUBLIC_HDRS:include/%=$(DESTDIR)$(INCLUDEDIR)/%) $(DESTDIR)$(LIBDIR)/libnpzstream.a \
	    $(DESTDIR)$(LIBDIR)/libnpzstream.so $(DESTDIR)$(LIBDIR)/$(SONAME) $(DESTDIR)$(LIBDIR)/$(REALNAME) \
	    $(DESTDIR)$(PKGCONFIGDIR)/npzstream.pc $(DESTDIR)$(BINDIR)/npzstream \
	    $(DESTDIR)$(MANDIR)/man1/npzstream.1 $(DESTDIR)$(MANDIR)/man3/npzstream.3
