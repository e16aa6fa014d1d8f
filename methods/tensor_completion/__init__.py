"""The paper's method for the ``tensor-completion`` task (see tasks/tensor_completion/README.md).

Code that the methods and the baselines of this family share goes in
``common/tensor_completion/``, never here: baselines must not import methods.
"""
