#!/usr/bin/env bash
# Presets expose no credential and make nothing writable that host tools
# execute from (issue 9 point 5, issue 19 point 5): configuration files are
# shown without their auth lines, credential stores stay out, caches are
# copy-on-write, a policy that makes a PATH directory or a shell startup file
# writable is refused, and the certificate variables pass with their files
# readable. Every check looks at the host afterwards.
. "$(dirname "$0")/lib.sh"
require_t2

export PATH=/usr/local/bin:/usr/bin:/bin
all=(--preset git --preset node --preset python --preset rust --preset go)

# The user's real configuration, with credentials of every kind.
mkdir -p "$HOME/.config/pip" "$HOME/.pip" "$HOME/.cargo" "$HOME/.config/git" "$HOME/.config/go" \
	"$HOME/.npm/_npx" "$HOME/.cargo/registry/src" "$HOME/.cache/pip" "$HOME/go/pkg/mod" \
	"$HOME/.cache/go-build"
cat >"$HOME/.npmrc" <<'EOF'
registry=https://registry.npmjs.org/
//registry.npmjs.org/:_authToken=SECRET-npm-token
//npm.corp/:_auth=SECRET-npm-auth
@corp:registry=https://me:SECRET-npm-url@npm.corp/
EOF
printf '[global]\nindex-url = https://__token__:SECRET-pip@pypi.corp/simple\ntimeout = 60\n' \
	>"$HOME/.config/pip/pip.conf"
cp "$HOME/.config/pip/pip.conf" "$HOME/.pip/pip.conf"
printf '[pypi]\nusername = __token__\npassword = SECRET-pypirc\n' >"$HOME/.pypirc"
printf '[registry]\ntoken = "SECRET-cargo-config"\n[build]\njobs = 2\n' >"$HOME/.cargo/config.toml"
printf '[registry]\ntoken = "SECRET-cargo-cred"\n' >"$HOME/.cargo/credentials.toml"
printf '[registry]\ntoken = "SECRET-cargo-cred"\n' >"$HOME/.cargo/credentials"
printf 'https://me:SECRET-git-store@github.com\n' >"$HOME/.git-credentials"
printf 'https://me:SECRET-git-xdg@github.com\n' >"$HOME/.config/git/credentials"
cat >"$HOME/.gitconfig" <<'EOF'
[user]
	name = Test User
[credential]
	helper = "!f() { echo password=SECRET-git-helper; }; f"
[http "https://git.corp/"]
	extraHeader = Authorization: Bearer SECRET-git-header
[url "https://x-access-token:SECRET-git-url@github.com/"]
	insteadOf = https://github.com/
EOF
printf '[core]\n\tautocrlf = false\n[http]\n\textraheader = AUTHORIZATION: basic SECRET-git-xdgcfg\n' \
	>"$HOME/.config/git/config"
printf 'GOPROXY=https://me:SECRET-go@proxy.corp,direct\nGOPRIVATE=*.corp\n' \
	>"$HOME/.config/go/env"
printf '{"_auth":"SECRET-netrc"}\n' >"$HOME/.netrc"
# Other files beside the configuration: a backup, a tool's token file.
printf 'index-url = https://u:SECRET-pip-bak@pypi.corp/simple\n' >"$HOME/.config/pip/pip.conf.bak"
printf 'SECRET-go-extra\n' >"$HOME/.config/go/token"
printf 'SECRET-git-extra\n' >"$HOME/.config/git/token.bak"
echo cached >"$HOME/.npm/data"
for f in .npmrc .config/pip/pip.conf .gitconfig .cargo/config.toml .config/go/env; do
	cp "$HOME/$f" "$T/orig-$(basename "$f")"
done

# --- no credential anywhere the command can read ---------------------------
out=$("$WARD" run "${all[@]}" -- sh -c '
	grep -rho "SECRET-[a-z-]*" "$HOME" /tmp 2>/dev/null | sort -u
	echo ---
	cat ~/.npmrc ~/.config/pip/pip.conf ~/.gitconfig ~/.cargo/config.toml ~/.config/go/env
	echo ---
	for f in .pypirc .cargo/credentials.toml .cargo/credentials .git-credentials \
		.config/git/credentials .netrc; do
		if [ -s "$HOME/$f" ] && cat "$HOME/$f" >/dev/null 2>&1; then echo "visible $f"; fi
	done
	cd /tmp && git config --global user.name' 2>&1)
leaks=$(sed -n '1,/^---$/p' <<<"$out" | grep SECRET)
check_eq "every preset: no SECRET readable anywhere in the home view or /tmp" "" "$leaks"
check "npmrc: the registry line is still there" grep -qx 'registry=https://registry.npmjs.org/' <<<"$out"
check "npmrc: a scoped registry keeps its URL without the user information" \
	grep -qx '@corp:registry=https://npm.corp/' <<<"$out"
check "pip.conf: index-url keeps the index, without the token" \
	grep -qx 'index-url = https://pypi.corp/simple' <<<"$out"
check "cargo config.toml: other settings stay" grep -qx 'jobs = 2' <<<"$out"
check "go env: GOPROXY keeps the proxy, without the user information" \
	grep -qx 'GOPROXY=https://proxy.corp,direct' <<<"$out"
check "gitconfig: git still reads user.name" grep -qx 'Test User' <<<"$out"
check_eq "credential stores (.pypirc, cargo credentials, git-credentials, .netrc) are not visible" \
	"" "$(grep '^visible ' <<<"$out")"
for f in .npmrc .config/pip/pip.conf .gitconfig .cargo/config.toml .config/go/env; do
	check "host: ~/$f unchanged" cmp -s "$HOME/$f" "$T/orig-$(basename "$f")"
done

# A symlinked ~/.npmrc (dotfile managers) is sanitized too; a file that
# cannot be sanitized (binary, too large) is left out.
mkdir -p "$HOME/dotfiles" && mv "$HOME/.npmrc" "$HOME/dotfiles/npmrc" &&
	ln -s dotfiles/npmrc "$HOME/.npmrc"
check_eq "a symlinked ~/.npmrc: no token, registry kept" "registry=https://registry.npmjs.org/" \
	"$("$WARD" run --preset node -- sh -c 'grep -h -e SECRET -e "^registry=" ~/.npmrc' 2>&1)"
rm "$HOME/.npmrc"
printf 'registry=x\n_authToken=SECRET-bin\0\n' >"$HOME/.npmrc"
check_eq "a binary ~/.npmrc is left out" 0 \
	"$("$WARD" run --preset node -- sh -c 'cat ~/.npmrc 2>/dev/null | wc -c' 2>&1)"
cp "$HOME/dotfiles/npmrc" "$HOME/.npmrc" && head -c 300000 /dev/zero | tr '\0' '#' >>"$HOME/.npmrc"
check_eq "a ~/.npmrc too large to sanitize is left out" 0 \
	"$("$WARD" run --preset node -- sh -c 'cat ~/.npmrc 2>/dev/null | grep -c SECRET' 2>&1)"
cp "$HOME/dotfiles/npmrc" "$HOME/.npmrc"

# --- nothing writable that host tools execute from ---------------------------
rm -rf "$HOME/.local/share/pnpm"
"$WARD" run --preset node -- sh -c '
	mkdir -p ~/.local/share/pnpm && echo "echo planted" > ~/.local/share/pnpm/git
	chmod +x ~/.local/share/pnpm/git' >/dev/null 2>&1
check_not "node: ~/.local/share/pnpm (PNPM_HOME, on PATH) is not created on the host" \
	test -e "$HOME/.local/share/pnpm"
mkdir -p "$HOME/.local/share/pnpm/store"
"$WARD" run --preset node -- sh -c 'echo planted > ~/.local/share/pnpm/git' >/dev/null 2>&1
check_not "node: an existing ~/.local/share/pnpm gets no planted executable" \
	test -e "$HOME/.local/share/pnpm/git"

out=$("$WARD" run "${all[@]}" -- sh -c '
	cat ~/.npm/data
	for d in ~/.npm/_npx ~/.cache/pip ~/.cargo/registry/src ~/go/pkg/mod ~/.cache/go-build \
		~/.local/share/pnpm/store; do
		echo planted >"$d/planted" && echo "wrote $d"
	done
	echo changed >~/.npm/data' 2>&1)
check "caches: the host cache is visible inside" grep -qx cached <<<"$out"
check_eq "caches: the command can write every preset cache (copy-on-write)" 6 \
	"$(grep -c '^wrote ' <<<"$out")"
planted=$(find "$HOME" -name planted 2>/dev/null)
check_eq "caches: nothing the command wrote reached the host's caches" "" "$planted"
check_eq "caches: the host's cached file is unchanged" cached "$(cat "$HOME/.npm/data")"
check_eq "caches: the next run sees the host's cache, not the last run's writes" cached \
	"$("$WARD" run --preset node -- sh -c 'cat ~/.npm/data; cat ~/.npm/_npx/planted 2>/dev/null')"
check_not "caches: a missing preset cache is not created on the host" \
	test -e "$HOME/.cache/yarn"

# A policy may not make writable what host shells run.
mkdir -p "$HOME/.local/bin"
printf '{ "version": 1, "fs": { "read_write": ["~/.local"] } }\n' >"$T/path.json"
err=$(PATH="$HOME/.local/bin:$PATH" "$WARD" run -p "$T/path.json" -- sh -c 'echo x > ~/.local/bin/git' 2>&1)
st=$?
check_eq "a read_write path holding a PATH directory is refused (exit 125)" 125 "$st"
check "the refusal names the PATH directory" grep -qF "$HOME/.local/bin" <<<"$err"
check_not "host: nothing was planted in the PATH directory" test -e "$HOME/.local/bin/git"
printf '{ "version": 1, "fs": { "read_write": ["~/.bashrc"] } }\n' >"$T/rc.json"
touch "$HOME/.bashrc"
check_eq "a read_write shell startup file is refused (exit 125)" 125 \
	"$(status_of "$WARD" run -p "$T/rc.json" -- true)"

# --- certificate settings pass, their files readable -------------------------
mkdir -p "$HOME/certs" && echo CERT-BUNDLE >"$HOME/certs/corp.pem" && echo private >"$HOME/other"
out=$(SSL_CERT_FILE=$HOME/certs/corp.pem NODE_EXTRA_CA_CERTS=$HOME/certs/corp.pem \
	REQUESTS_CA_BUNDLE=$HOME/certs/corp.pem CURL_CA_BUNDLE=$HOME/certs/corp.pem \
	GIT_SSL_CAINFO=$HOME/certs/corp.pem SSL_CERT_DIR=$HOME/certs \
	"$WARD" run -- sh -c 'for v in SSL_CERT_FILE NODE_EXTRA_CA_CERTS REQUESTS_CA_BUNDLE \
		CURL_CA_BUNDLE GIT_SSL_CAINFO SSL_CERT_DIR; do eval "echo $v=\$$v"; done
		cat "$SSL_CERT_FILE"; ls "$SSL_CERT_DIR"; cat ~/other 2>/dev/null' 2>&1)
for v in SSL_CERT_FILE NODE_EXTRA_CA_CERTS REQUESTS_CA_BUNDLE CURL_CA_BUNDLE GIT_SSL_CAINFO; do
	check "$v passes" grep -qx "$v=$HOME/certs/corp.pem" <<<"$out"
done
check "SSL_CERT_DIR passes" grep -qx "SSL_CERT_DIR=$HOME/certs" <<<"$out"
check "the bundle SSL_CERT_FILE names is readable" grep -qx CERT-BUNDLE <<<"$out"
check_not "only the certificate paths: another file in \$HOME stays hidden" grep -qx private <<<"$out"
out=$(SSL_CERT_DIR=$HOME "$WARD" run -- sh -c 'cat ~/other 2>/dev/null; echo done' 2>&1)
check_not "SSL_CERT_DIR naming the home directory does not open it" grep -qx private <<<"$out"
done_testing
