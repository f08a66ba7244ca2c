package fsx

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// WriteFileAtomic replaces the file at path with data, atomically and
// durably: a temporary file in path's folder is written, flushed, renamed
// over path and the folder flushed (see Dir.WriteFile). The folder must
// exist; symlinks in it are followed, the last name is replaced as itself.
func WriteFileAtomic(path string, data []byte, perm fs.FileMode) error {
	d, err := OpenDir(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer d.Close()
	return d.WriteFile(filepath.Base(path), data, perm)
}

// Rename renames oldpath to newpath (replacing newpath, as os.Rename) and
// flushes the folder of each, so that the move survives a crash. A file
// renamed into place must have been flushed (File.Sync) by its writer.
func Rename(oldpath, newpath string) error {
	if err := os.Rename(oldpath, newpath); err != nil {
		return err
	}
	from, to := filepath.Dir(oldpath), filepath.Dir(newpath)
	if err := syncDir(to); err != nil {
		return err
	}
	if filepath.Clean(from) != filepath.Clean(to) {
		return syncDir(from)
	}
	return nil
}

// syncDir flushes the folder at path (names made, renamed or removed in
// it).
func syncDir(path string) error {
	d, err := OpenDir(path)
	if err != nil {
		return fmt.Errorf("flushing %s: %w", path, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("flushing %s: %w", path, err)
	}
	return nil
}
