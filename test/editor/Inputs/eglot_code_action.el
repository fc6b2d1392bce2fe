;;; eglot_code_action.el --- Emacs (eglot) drives clangd-optiml  -*- lexical-binding: t -*-
;; Run: emacs --batch -Q -l eglot_code_action.el
;; Environment: OPTIML_PROXY, OPTIML_CLANGD, CU_FILE, KERNEL_LINE (1-based),
;; ACTION (a substring of the action's title).
;; Opens CU_FILE in c++-mode with the eglot configuration of docs/editor.md
;; (clangd-optiml as the server program), asks for code actions on the
;; kernel's line, executes the chosen one as eglot does (the server answers
;; with workspace/applyEdit, which eglot applies to the buffer), saves.
;; Prints "eglot: offered: TITLE" per clang-optiml action, "eglot: chose:
;; TITLE" and "eglot: wrote FILE".
(package-initialize)
(add-to-list 'load-path (car (file-expand-wildcards
                               "/usr/share/emacs/site-lisp/elpa/eglot-*")))
(require 'eglot)
(setq eglot-confirm-server-initiated-edits nil
      eglot-sync-connect t
      eglot-connect-timeout 60
      eglot-events-buffer-size 0)
(add-to-list 'eglot-server-programs
             `((c-mode c++-mode) . (,(getenv "OPTIML_PROXY")
                                    ,(concat "--clangd=" (getenv "OPTIML_CLANGD")))))
(defun out (fmt &rest args)
  (princ (concat (apply #'format fmt args) "\n")))
(let* ((file (getenv "CU_FILE"))
       (line (string-to-number (getenv "KERNEL_LINE")))
       (want (getenv "ACTION")))
  (find-file file)
  (c++-mode)
  (apply #'eglot (eglot--guess-contact))
  (let ((server (eglot-current-server))
        (actions nil)
        (tries 0))
    (unless server (out "eglot: no server") (kill-emacs 1))
    ;; Our actions come from the first analysis of the buffer; until it is
    ;; in, only clangd's are offered.
    (while (and (< tries 600)
                (not (seq-some (lambda (a) (string-match-p "^clang-optiml:"
                                                           (plist-get a :title)))
                               actions)))
      (setq tries (1+ tries))
      (goto-char (point-min))
      (forward-line (1- line))
      (setq actions
            (append (jsonrpc-request
                     server :textDocument/codeAction
                     (list :textDocument (eglot--TextDocumentIdentifier)
                           :range (list :start (eglot--pos-to-lsp-position
                                                (line-beginning-position))
                                        :end (eglot--pos-to-lsp-position
                                              (line-end-position)))
                           :context (list :diagnostics [])))
                    nil))
      (unless (seq-some (lambda (a) (string-match-p "^clang-optiml:"
                                                    (plist-get a :title)))
                        actions)
        (accept-process-output nil 0.5)))
    (dolist (a actions)
      (when (string-match-p "^clang-optiml:" (plist-get a :title))
        (out "eglot: offered: %s" (plist-get a :title))))
    (let ((chosen (seq-find (lambda (a) (string-match-p (regexp-quote want)
                                                        (plist-get a :title)))
                            actions)))
      (unless chosen (out "eglot: no action matching %s" want) (kill-emacs 1))
      (out "eglot: chose: %s" (plist-get chosen :title))
      (let* ((cmd (plist-get chosen :command))
             (before (buffer-string)))
        (eglot-execute-command server (plist-get cmd :command)
                               (plist-get cmd :arguments))
        ;; The edit arrives as a server request after the command's answer.
        (let ((n 0))
          (while (and (< n 600) (string= before (buffer-string)))
            (setq n (1+ n))
            (accept-process-output nil 0.5)))
        (when (string= before (buffer-string))
          (out "eglot: the buffer did not change") (kill-emacs 1))))
    (save-buffer)
    (out "eglot: wrote %s" file)
    (ignore-errors (eglot-shutdown server))
    (kill-emacs 0)))
