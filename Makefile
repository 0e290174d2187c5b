# Entry points; the work is done by the kmt package (python3 -m kmt --help).
PY ?= python3
# BASE=7.3: another base kernel (kmt/bases.py); the default is 6.12.
ifdef BASE
export KMT_BASE := $(BASE)
endif
KMT = $(PY) -m kmt $(if $(DRY_RUN),--dry-run) $(foreach c,$(CELL),--cell $(c))

.PHONY: run check bench series-check setup shell prepare build-lean build-full selftest export signoff backport-messages postings postings-check postings-prove other-suites reverts cells cover compare plugin-compare lava lava-run lava-import clean distclean

run:            ## defconfig kernel, kasan sync: kasan KUnit + arm64 mte kselftests
	$(KMT) run
check:          ## the test matrix (what CI runs; ALL=1: also KASAN sw_tags, KCSAN, clang)
	$(KMT) check $(if $(filter-out 0,$(ALL)),--all)
bench:          ## baseline vs patched: instruction counts and A/B time ratios (QUICK=1: smoke run; PLAN=counts: exact counts only; PLAN=entry: the same for the system call and context switch rows alone; PLAN=shapes: upstream's sizes; PLAN=refcount: part 3 alone, 9 wall-time pairs; PLAN=refcount-postings, BASE=7.3: its exact counts and bloat-o-meter from the base with only the part 3 postings applied; PLAN=gki: exact counts on the GKI-shaped kernel with Android's boot options; PLAN=attrib, PLAN=attrib-gki: what KASAN still costs over kasan=off on the patched kernel, by cause)
	$(KMT) bench $(if $(filter-out 0,$(QUICK)),--quick) $(if $(PLAN),--plan $(PLAN))
series-check:   ## the series' quality gates (ALL=1: also build every prefix and config variants)
	$(KMT) series-check $(if $(filter-out 0,$(ALL)),--all)
setup:          ## install the host packages (Debian 12, as root)
	$(KMT) setup
prepare:        ## unpack the base into build/linux and apply the series
	$(KMT) prepare
build-lean build-full:
	$(KMT) build $(@:build-%=%)
selftest:       ## the tooling's own tests (no kernel needed)
	$(PY) -m unittest discover -s tests -t .
export:         ## BRANCH=name: format-patch base..BRANCH into patches/
	@test -n "$(BRANCH)" || { echo "usage: make export BRANCH=<branch in build/linux>"; exit 2; }
	$(KMT) export $(BRANCH)
signoff:        ## NAME="Full Name" EMAIL=you@example.com: author and sign-off of every patch
	@test -n "$(NAME)" -a -n "$(EMAIL)" || { echo 'usage: make signoff NAME="Full Name" EMAIL=you@example.com'; exit 2; }
	$(KMT) signoff "$(NAME) <$(EMAIL)>"
backport-messages: ## LINUX_GIT=/path/to/mainline: every backport's upstream changelog from that clone (before sending; DRY_RUN=1: say what would change)
	@test -n "$(LINUX_GIT)" || { echo 'usage: make backport-messages LINUX_GIT=/path/to/a/mainline/clone'; exit 2; }
	$(KMT) backport-messages '$(LINUX_GIT)'
postings:       ## BASE=7.3: write patches/7.3/postings/ from postings.toml (one posting per unit a maintainer applies; POSTING=name: only that one)
	$(KMT) postings write $(POSTING)
postings-check: ## BASE=7.3: each posting applies alone, checkpatch, recipients, Fixes/stable, plain-text cover (STATIC=1: no kernel tree)
	$(KMT) postings check $(if $(filter-out 0,$(STATIC)),--static) $(POSTING)
postings-prove: ## BASE=7.3: each posting's proofs: the test fails on the base as shipped, passes with the posting alone
	$(KMT) postings prove $(POSTING)
other-suites:   ## slub's, kfence's and the lib KUnit suites under KASAN HW_TAGS in each mode (ALL=1 make check runs it; BASE=7.3 for 7.3)
	$(KMT) othersuites
reverts:        ## each change of the series reverted alone: the tests patches/reverts.toml names must fail (CHANGE=part of a subject: only that one)
	$(KMT) reverts run $(if $(CHANGE),'$(CHANGE)')
cells:
	$(KMT) cells
shell:          ## CELL=sync: boot that cell's kernel and initramfs with a shell on the console (GDB=1: gdb stub on :1234, halted; SUITES=1: run its suites first)
	$(PY) -m kmt shell $(or $(CELL),sync) $(if $(filter-out 0,$(GDB)),--gdb) $(if $(filter-out 0,$(SUITES)),--suites)
cover:          ## the cover letter and README results from the last run (6.12: make bench; FROM=entry: make bench PLAN=entry; BASE=7.3: make check)
	$(KMT) cover
compare:        ## every base's bench results side by side (README); MEASURE=1: first measure every base in one run (QUICK sizes)
	$(KMT) compare $(if $(filter-out 0,$(MEASURE)),--measure)
plugin-compare: ## the QEMU contrib plugin posting (patches/qemu) on its test guest and on the lean kernels' boots: the same counts as the project's plugin
	$(KMT) plugin-compare
lava-run:       ## CELL=sync: that cell's LAVA job through Debian's lava-run here (root), compared with its direct run; BOOT=bench-...: a QUICK bench boot's
	$(KMT) --cell $(or $(CELL),sync) lava-run $(if $(BOOT),--boot $(BOOT))
lava-import:    ## LOG=job.log LAB= DEVICE= JOB= [CELL=sync | BOOT=bench-...]: a lab's run of an exported job, into the results
	$(KMT) --cell $(or $(CELL),sync) lava-import $(LOG) --lab '$(LAB)' --device '$(DEVICE)' --job '$(JOB)' $(if $(BOOT),--boot $(BOOT))
lava:           ## one LAVA job per make check cell (ALL=1: every cell; URL_BASE=: where a lab gets the images; BENCH=quick|full: per make bench boot instead; DEVICE=fvp|u-boot FIRMWARE_URL=: lab templates)
	$(KMT) lava $(if $(filter-out 0,$(ALL)),--all) $(if $(URL_BASE),--url-base $(URL_BASE)) $(if $(BENCH),--bench $(BENCH)) $(if $(DEVICE),--device $(DEVICE)) $(if $(FIRMWARE_URL),--firmware-url $(FIRMWARE_URL))
clean:          ## remove build outputs and logs, keep the kernel tree
	rm -rf build/out build/logs build/results
distclean:      ## remove everything generated, including the kernel tree
	rm -rf build
