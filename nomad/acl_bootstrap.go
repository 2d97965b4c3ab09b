package nomad

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/drover-sched/drover/structs"
)

// aclBootstrapResetFile is the file, in the server's data dir
// (<data_dir>/server), where an operator who lost every management token
// writes the reset index to allow one more bootstrap, as in Nomad.
const aclBootstrapResetFile = "acl-bootstrap-reset"

// maxResetFileSize bounds what is read of the reset file: it holds one
// number.
const maxResetFileSize = 64

// Bootstrap creates the first management token, once. Afterwards it is
// refused with the reset index in the error, unless the leader's
// <data_dir>/server/acl-bootstrap-reset holds exactly that index: then
// one more bootstrap is allowed (the index moves on, so the file does not
// allow another). The FSM checks the reset index again, so two bootstraps
// racing through raft cannot both succeed. BootstrapSecret, when given,
// becomes the token's secret; it must be a UUID.
func (a *ACL) Bootstrap(args *structs.ACLTokenBootstrapRequest, reply *structs.ACLTokenUpsertResponse) error {
	if done, err := a.answered("ACL.Bootstrap", args, reply); done {
		return err
	}
	secret := args.BootstrapSecret
	if secret == "" {
		secret = structs.GenerateUUID()
	} else if _, err := uuid.Parse(secret); err != nil || len(secret) != 36 {
		return errBadRequest("BootstrapSecret must be a UUID such as 3b3a80cd-1c8b-6fe6-7db1-5f01f6c0d0d7, like every token secret")
	}
	done, err := a.srv.State().ACLBootstrapIndex()
	if err != nil {
		return err
	}
	var reset uint64
	if done != 0 {
		file := a.resetFilePath()
		specified := a.readResetIndex(file)
		switch {
		case specified == 0:
			return fmt.Errorf("%w (reset index: %d); to bootstrap again, write %d into %s on the leader",
				structs.ErrACLBootstrapDone, done, done, file)
		case specified != done:
			return errBadRequest("Invalid bootstrap reset index (specified %d, reset index: %d); write %d into %s",
				specified, done, done, file)
		}
		reset = done
	}
	tok := &structs.ACLToken{
		AccessorID: structs.GenerateUUID(),
		SecretHash: structs.HashACLSecret(secret),
		Name:       "Bootstrap Token",
		Type:       structs.ACLManagementToken,
		Global:     true,
		CreateTime: a.srv.Now().UTC(),
	}
	idx, _, err := a.srv.raftApply(structs.ACLTokenBootstrapRequestType, &structs.ACLTokenBootstrapApplyRequest{Token: tok, ResetIndex: reset})
	if err != nil {
		return err
	}
	stored, err := a.srv.State().ACLTokenByAccessorID(nil, tok.AccessorID)
	if err != nil {
		return err
	}
	if stored == nil {
		return fmt.Errorf("the bootstrap token was written at index %d but cannot be read back", idx)
	}
	if reset != 0 {
		a.srv.Logger().Warn("ACL bootstrap reset: a new bootstrap token was created", "reset_index", reset, "accessor_id", tok.AccessorID)
	}
	out := stored.Copy()
	out.SecretID = secret
	reply.Tokens = []*structs.ACLToken{out}
	reply.Index = idx
	return nil
}

func (a *ACL) resetFilePath() string {
	dir := a.srv.dataDir()
	if dir == "" {
		dir = "<data_dir>/server"
	}
	return filepath.Join(dir, aclBootstrapResetFile)
}

// readResetIndex reads the operator's reset index, 0 when there is none.
// A file that cannot be read or parsed is logged and counts as none.
func (a *ACL) readResetIndex(path string) uint64 {
	if a.srv.dataDir() == "" {
		return 0
	}
	f, err := os.Open(path)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			a.srv.Logger().Error("reading the ACL bootstrap reset file failed", "path", path, "error", err)
		}
		return 0
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, maxResetFileSize))
	if err != nil {
		a.srv.Logger().Error("reading the ACL bootstrap reset file failed", "path", path, "error", err)
		return 0
	}
	idx, err := strconv.ParseUint(strings.TrimSpace(string(raw)), 10, 64)
	if err != nil {
		a.srv.Logger().Error("the ACL bootstrap reset file must hold the reset index and nothing else", "path", path, "error", err)
		return 0
	}
	return idx
}
